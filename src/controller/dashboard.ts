/**
 * The read-only dashboard the controller serves at `/`: members grouped by node (what each node
 * serves: pool, virtual services, Pod, state, last apply), with filters by node and namespace, kept
 * live by polling GET /api/v1/nodes once a second. No build step and no dependency: one page,
 * rendered with DOM calls (no HTML is built from data, so names cannot inject markup).
 */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>npl-lb: pools by node</title>
<style>
  :root { font-family: system-ui, sans-serif; color: #1d2430; background: #f6f7f9; }
  body { margin: 0; }
  header { background: #1d2430; color: #fff; padding: 12px 20px; display: flex; gap: 16px; align-items: baseline; }
  header h1 { font-size: 18px; margin: 0; }
  header .meta { opacity: .8; font-size: 13px; }
  form { padding: 12px 20px; display: flex; gap: 16px; align-items: center; font-size: 14px; }
  main { padding: 0 20px 20px; display: grid; gap: 14px; }
  section.node { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; }
  section.node h2 { font-size: 15px; margin: 0; padding: 10px 14px; border-bottom: 1px solid #dde1e7; }
  section.node h2 .count { font-weight: normal; color: #667; margin-left: 8px; }
  table { border-collapse: collapse; width: 100%; font-size: 13px; }
  th, td { text-align: left; padding: 6px 14px; border-bottom: 1px solid #eef0f3; }
  th { color: #667; font-weight: 600; }
  .enabled { color: #17803d; }
  .draining { color: #b25e00; }
  .failed { color: #b3261e; }
  .empty { padding: 20px; color: #667; }
  .banner { margin: 0 20px 12px; padding: 10px 14px; border-radius: 6px; background: #fff4e5; border: 1px solid #f0c27b; font-size: 14px; }
</style>
</head>
<body>
<header><h1>npl-lb</h1><span class="meta" id="meta">loading…</span></header>
<form id="filters">
  <label>Node <select id="node"><option value="">all nodes</option></select></label>
  <label>Namespace <select id="namespace"><option value="">all namespaces</option></select></label>
</form>
<div id="banner" class="banner" hidden></div>
<main id="nodes"></main>
<script>
(() => {
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const c of children) e.append(c);
    return e;
  };
  const known = { node: new Set(), namespace: new Set() };
  const options = (select, values) => {
    for (const v of [...values].sort()) {
      if ([...select.options].some((o) => o.value === v)) continue;
      select.append(el('option', { value: v }, v || '(no node)'));
    }
  };
  const render = (doc) => {
    const node = $('node').value;
    const namespace = $('namespace').value;
    $('meta').textContent = 'cluster ' + doc.clusterName + ' · adapter ' + doc.adapter + ' · ' + doc.generatedAt +
      (doc.lastSync ? ' · last sync ' + doc.lastSync.at : '');
    const l = doc.leadership;
    const banner = $('banner');
    banner.hidden = !(l && l.role === 'standby');
    if (l && l.role === 'standby') {
      banner.textContent = 'Standby: this replica does not write to the load balancer. The leader is ' +
        (l.holder || '(none yet)') + (l.since ? ' since ' + l.since : '') + '; its dashboard shows the pools.';
    }
    for (const n of doc.nodes) {
      known.node.add(n.node);
      for (const m of n.members) known.namespace.add(m.service.split('/')[0]);
    }
    options($('node'), known.node);
    options($('namespace'), known.namespace);
    const main = $('nodes');
    main.replaceChildren();
    const shown = doc.nodes
      .filter((n) => node === '' || n.node === node)
      .map((n) => ({ ...n, members: n.members.filter((m) => namespace === '' || m.service.split('/')[0] === namespace) }))
      .filter((n) => n.members.length > 0);
    if (shown.length === 0) main.append(el('p', { class: 'empty' }, 'No members to show.'));
    for (const n of shown) {
      const rows = n.members.map((m) =>
        el('tr', { 'data-node': n.node, 'data-pool': m.pool, 'data-member': m.address + ':' + m.port, 'data-state': m.state },
          el('td', {}, m.address + ':' + m.port),
          el('td', {}, m.pod || '-'),
          el('td', { class: m.state }, m.state),
          el('td', {}, m.pool),
          el('td', {}, m.virtualServices.join(', ') || '-'),
          el('td', { class: m.lastApply === 'failed' ? 'failed' : '', title: m.lastError || m.lastApplyAt || '' }, m.lastApply)));
      const count = el('span', { class: 'count' }, n.members.length + ' member' + (n.members.length === 1 ? '' : 's'));
      main.append(el('section', { class: 'node', 'data-node': n.node },
        el('h2', {}, n.node || '(no node)', count),
        el('table', {},
          el('thead', {}, el('tr', {}, ...['member', 'pod', 'state', 'pool', 'virtual services', 'last apply'].map((h) => el('th', {}, h)))),
          el('tbody', {}, ...rows))));
    }
  };
  let last = null;
  const tick = async () => {
    try {
      const r = await fetch('/api/v1/nodes', { cache: 'no-store' });
      if (r.ok) {
        last = await r.json();
        render(last);
      } else {
        $('meta').textContent = 'controller answered ' + r.status;
      }
    } catch (err) {
      $('meta').textContent = 'controller unreachable: ' + err;
    }
  };
  for (const id of ['node', 'namespace']) $(id).addEventListener('change', () => last && render(last));
  tick();
  setInterval(tick, 1000);
})();
</script>
</body>
</html>
`;
