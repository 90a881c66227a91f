/**
 * The read-only dashboard the controller serves at `/`, for LB admins: virtual services (VIP,
 * listeners, certificates, routes, members serving, the ones needing attention in red with the
 * reason), pools with the object each stands for, a picture of each (VIP, nodes, Pods, each member
 * coloured by what the load balancer does with it) and the down reason of each member written out,
 * members grouped by node with our admin state and the device's health, and per node the
 * impact of losing it. Live through server-sent events (GET /api/v1/dashboard/events); a leader or
 * standby banner with the last sync. No build step and no dependency: one page rendered with DOM
 * calls (no HTML is built from data, so names cannot inject markup).
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
  header { background: #1d2430; color: #fff; padding: 12px 20px; display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; }
  header h1 { font-size: 18px; margin: 0; }
  header .meta { opacity: .8; font-size: 13px; }
  header .live { margin-left: auto; font-size: 12px; }
  form { padding: 12px 20px; display: flex; gap: 16px; align-items: center; font-size: 14px; }
  main { padding: 0 20px 20px; display: grid; gap: 14px; }
  h2.part { font-size: 15px; margin: 8px 0 0; }
  section.card { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; }
  section.card h3 { font-size: 15px; margin: 0; padding: 10px 14px; border-bottom: 1px solid #dde1e7; }
  section.card h3 .count { font-weight: normal; color: #667; margin-left: 8px; }
  table { border-collapse: collapse; width: 100%; font-size: 13px; }
  th, td { text-align: left; padding: 6px 14px; border-bottom: 1px solid #eef0f3; vertical-align: top; }
  th { color: #667; font-weight: 600; }
  .enabled, .up { color: #17803d; }
  .draining, .maint, .unchecked, .unknown { color: #b25e00; }
  .failed, .down { color: #b3261e; font-weight: 600; }
  tr.problem td { background: #fdecea; color: #8c1d18; }
  .impact { padding: 8px 14px; font-size: 13px; border-top: 1px solid #eef0f3; background: #fafbfc; }
  .impact .none-left { color: #b3261e; font-weight: 600; }
  .empty { padding: 14px; color: #667; }
  .banner { margin: 0 20px 12px; padding: 10px 14px; border-radius: 6px; font-size: 14px; border: 1px solid #c9d3e0; background: #eef3f9; }
  .banner.standby { background: #fff4e5; border-color: #f0c27b; }
  .note { color: #667; font-size: 12px; }
  section.card p.note { margin: 0; padding: 8px 14px; }
  .picture { padding: 6px 14px; overflow-x: auto; }
</style>
</head>
<body>
<header><h1>npl-lb</h1><span class="meta" id="meta">loading…</span><span class="live" id="live">connecting…</span></header>
<div id="banner" class="banner" hidden></div>
<form id="filters">
  <label>Node <select id="node"><option value="">all nodes</option></select></label>
  <label>Namespace <select id="namespace"><option value="">all namespaces</option></select></label>
  <button type="button" id="refresh-health">Refresh health</button>
  <span class="note" id="health-note"></span>
</form>
<main>
  <h2 class="part">Virtual services</h2>
  <section class="card" id="vss"></section>
  <h2 class="part">Pools</h2>
  <div id="pools" style="display:grid; gap:14px"></div>
  <h2 class="part">Nodes</h2>
  <div id="nodes" style="display:grid; gap:14px"></div>
</main>
<script>
(() => {
  const $ = (id) => document.getElementById(id);
  // An address and port as written: IPv6 in brackets.
  const hp = (a, p) => (a.includes(':') ? '[' + a + ']:' + p : a + ':' + p);
  const el = (tag, attrs, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
    for (const c of children) e.append(c);
    return e;
  };
  const table = (heads, rows) =>
    el('table', {}, el('thead', {}, el('tr', {}, ...heads.map((h) => el('th', {}, h)))), el('tbody', {}, ...rows));
  const known = { node: new Set(), namespace: new Set() };
  const options = (select, values) => {
    for (const v of [...values].sort()) {
      if ([...select.options].some((o) => o.value === v)) continue;
      select.append(el('option', { value: v }, v || '(no node)'));
    }
  };
  const banner = (doc) => {
    const l = doc.leadership || { role: 'single' };
    const b = $('banner');
    const sync = doc.lastSync ? ' Last sync ' + doc.lastSync.at + ' (' + doc.lastSync.changes + ' changes, ' + doc.lastSync.failed + ' failed).' : ' No sync yet.';
    b.hidden = false;
    b.className = 'banner ' + l.role;
    b.dataset.role = l.role;
    if (l.role === 'standby') {
      b.textContent = 'Standby: this replica does not write to the load balancer. The leader is ' +
        (l.holder || '(none yet)') + (l.since ? ' since ' + l.since : '') + '; its dashboard shows the pools.';
    } else if (l.role === 'leader') {
      b.textContent = 'Leader: this replica writes to the load balancer' + (l.since ? ' since ' + l.since : '') + '.' + sync;
    } else {
      b.textContent = 'Single replica: this controller writes to the load balancer.' + sync;
    }
  };
  const renderVss = (doc) => {
    const box = $('vss');
    if (doc.virtualServices.length === 0) return box.replaceChildren(el('p', { class: 'empty' }, 'No virtual services.'));
    const rows = doc.virtualServices.map((v) =>
      el('tr', { 'data-vs': v.name, class: v.problem ? 'problem' : '', 'data-problem': v.problem || '' },
        el('td', {}, v.name),
        el('td', {}, hp(v.vip, v.port)),
        el('td', {}, v.listeners.join(', ')),
        el('td', {}, v.certificates.length === 0 ? '-' : v.certificates.map((c) => c.subject + ' [' + c.sans.join(', ') + '] until ' + c.notAfter).join('; ')),
        el('td', { style: 'white-space: pre-line' }, v.routes.length === 0 ? '-' : v.routes.map((r) => (r.host || '*') + (r.path || '') + ' → ' + r.pool).join('\\n')),
        el('td', { 'data-serving': v.members.serving, 'data-total': v.members.total }, v.members.serving + ' of ' + v.members.total + ' serving' + (v.members.down ? ', ' + v.members.down + ' down' : '')),
        el('td', { class: v.lastApply === 'failed' ? 'failed' : '' }, v.lastApply),
        el('td', {}, v.problem || 'ok')));
    box.replaceChildren(table(['name', 'VIP', 'listeners', 'certificates', 'routes', 'members', 'last apply', 'status'], rows));
  };
  const renderImpact = (imp) => {
    const box = el('div', { class: 'impact', 'data-impact-node': imp.node });
    if (imp.virtualServices.length === 0) {
      box.append('Losing this node would take no serving member from any virtual service.');
      return box;
    }
    box.append(el('div', {}, 'Losing this node: ' + imp.virtualServices.length + ' virtual service(s) lose members, ',
      imp.noneLeft ? el('span', { class: 'none-left' }, imp.noneLeft + ' would have none left') : 'each keeps serving members', '.'));
    box.append(table(['virtual service', 'VIP', 'loses', 'left'], imp.virtualServices.map((v) =>
      el('tr', { 'data-vs': v.name, 'data-lose': v.lose, 'data-of': v.of, 'data-none-left': v.noneLeft },
        el('td', {}, v.name), el('td', {}, hp(v.vip, v.port)), el('td', {}, v.lose + ' of ' + v.of),
        el('td', { class: v.noneLeft ? 'none-left' : '' }, v.noneLeft ? 'none left' : String(v.left))))));
    return box;
  };
  // Each pool: the Service it stands for, what is in front of it and what that serves, its members
  // with node and the down reason written out, and what draining each node takes away.
  // A pool as a picture: its VIPs, the nodes its members are on, and the members (the Pods), each
  // member coloured by what the load balancer does with it. SVG made with DOM calls, text as text.
  const SVG = 'http://www.w3.org/2000/svg';
  const svg = (tag, attrs, text) => {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const memberState = (m) => (m.health === 'down' ? 'down' : m.state !== 'enabled' ? m.state : 'serving');
  const COLOURS = { serving: '#17803d', draining: '#b25e00', maint: '#b25e00', down: '#b3261e' };
  const picture = (p, members) => {
    const vips = [...new Set(p.virtualServices.map((v) => v.at))];
    const nodes = [...new Set(members.map((m) => m.node || '(no node)'))].sort();
    const rowH = 26;
    const height = Math.max(vips.length, nodes.length, members.length, 1) * rowH + 10;
    const root = svg('svg', { width: 760, height, viewBox: '0 0 760 ' + height, role: 'img', 'data-picture-of': p.pool });
    root.append(svg('title', {}, p.pool + ': VIP, nodes and Pods'));
    const y = (i, n) => 5 + (height - 10) * ((i + 0.5) / Math.max(n, 1));
    const nodeY = new Map(nodes.map((n, i) => [n, y(i, nodes.length)]));
    vips.forEach((v, i) => {
      const vy = y(i, vips.length);
      for (const [n, ny] of nodeY) {
        const serving = members.some((m) => (m.node || '(no node)') === n && memberState(m) === 'serving');
        root.append(svg('line', { x1: 170, y1: vy, x2: 290, y2: ny, stroke: serving ? '#9aa5b1' : '#e3b6b3', 'stroke-dasharray': serving ? '' : '4 3' }));
      }
      root.append(svg('rect', { x: 10, y: vy - 10, width: 160, height: 20, rx: 4, fill: '#1d2430', 'data-vip': v }));
      root.append(svg('text', { x: 90, y: vy + 4, 'text-anchor': 'middle', fill: '#fff', 'font-size': 12 }, v));
    });
    members.forEach((m, i) => {
      const my = y(i, members.length);
      const state = memberState(m);
      root.append(svg('line', { x1: 410, y1: nodeY.get(m.node || '(no node)'), x2: 500, y2: my, stroke: COLOURS[state] || '#9aa5b1' }));
      root.append(svg('circle', { cx: 510, cy: my, r: 8, fill: COLOURS[state] || '#9aa5b1', 'data-member': hp(m.address, m.port), 'data-member-state': state }));
      root.append(svg('text', { x: 524, y: my + 4, 'font-size': 12 }, (m.pod || hp(m.address, m.port)) + ' · ' + state));
    });
    for (const [n, ny] of nodeY) {
      root.append(svg('rect', { x: 290, y: ny - 10, width: 120, height: 20, rx: 4, fill: '#eef3f9', stroke: '#c9d3e0', 'data-node-box': n }));
      root.append(svg('text', { x: 350, y: ny + 4, 'text-anchor': 'middle', 'font-size': 12 }, n));
    }
    return root;
  };
  // A member's last hour, newest first: the time of day and what happened (health, changes applied).
  const recent = (entries) =>
    (entries || []).slice(-5).reverse().map((e) => e.at.slice(11, 19) + ' ' + e.what).join('; ') || '-';
  const renderPools = (doc, node, namespace) => {
    const box = $('pools');
    const shown = (doc.pools || []).filter((p) => namespace === '' || p.service.split('/')[0] === namespace);
    if (shown.length === 0) return box.replaceChildren(el('p', { class: 'empty' }, 'No pools.'));
    box.replaceChildren(...shown.map((p) => {
      const rows = p.members.filter((m) => node === '' || m.node === node).map((m) =>
        el('tr', { 'data-pool-of': p.pool, 'data-pool-member': m.address + ':' + m.port, 'data-member-node': m.node, 'data-health': m.health },
          el('td', {}, hp(m.address, m.port)), el('td', {}, m.node || '-'), el('td', {}, m.pod || '-'),
          el('td', { class: m.state }, m.state), el('td', { class: m.health }, m.health),
          el('td', { class: 'reason' }, m.health === 'down' ? (m.healthReason || 'no reason given') : ''),
          el('td', { class: 'gate', 'data-gate': m.gate || '' }, m.gate || '-'),
          el('td', { class: 'history', 'data-history-of': m.address + ':' + m.port }, recent(m.history))));
      const front = p.virtualServices.map((v) => v.name + ' (' + v.at + ') for ' + v.serves).join('; ');
      const drain = p.drain.map((d) => (d.node || '(no node)') + ' ' + d.serving + ' of ' + d.of).join(', ');
      return el('section', { class: 'card pool', 'data-pool-card': p.pool },
        el('h3', {}, p.pool, el('span', { class: 'count' }, 'Service ' + p.service + ', port ' + p.servicePort)),
        el('p', { class: 'note front' }, 'in front: ' + (front || 'no virtual service')),
        el('div', { class: 'picture' }, picture(p, p.members.filter((m) => node === '' || m.node === node))),
        table(['member', 'node', 'pod', 'admin', 'health', 'down reason', 'readiness gate', 'last hour'], rows),
        el('p', { class: 'note drain' }, 'draining a node takes away its serving members: ' + (drain || 'none')));
    }));
  };
  const render = (doc) => {
    const node = $('node').value;
    const namespace = $('namespace').value;
    $('meta').textContent = 'cluster ' + doc.clusterName + ' · adapter ' + doc.adapter + ' · ' + doc.generatedAt;
    const h = doc.health || { supported: false };
    $('health-note').textContent = !h.supported ? 'health: not reported by this adapter' :
      h.error ? 'health read failed: ' + h.error + (h.at ? ' (last read ' + h.at + ')' : '') :
      h.at ? 'health read ' + h.at : 'health not read yet';
    $('refresh-health').disabled = !h.supported;
    banner(doc);
    renderVss(doc);
    renderPools(doc, node, namespace);
    for (const n of doc.nodes) {
      known.node.add(n.node);
      for (const m of n.members) known.namespace.add(m.service.split('/')[0]);
    }
    options($('node'), known.node);
    options($('namespace'), known.namespace);
    const impacts = new Map(doc.impact.map((i) => [i.node, i]));
    const main = $('nodes');
    main.replaceChildren();
    const shown = doc.nodes
      .filter((n) => node === '' || n.node === node)
      .map((n) => ({ ...n, members: n.members.filter((m) => namespace === '' || m.service.split('/')[0] === namespace) }))
      .filter((n) => n.members.length > 0);
    if (shown.length === 0) main.append(el('p', { class: 'empty' }, 'No members to show.'));
    for (const n of shown) {
      const rows = n.members.map((m) =>
        el('tr', { 'data-node': n.node, 'data-pool': m.pool, 'data-member': m.address + ':' + m.port, 'data-state': m.state, 'data-health': m.health },
          el('td', {}, hp(m.address, m.port)),
          el('td', {}, m.pod || '-'),
          el('td', { class: m.state }, m.state),
          el('td', { class: m.health, title: (m.healthReason || '') + (m.healthAt ? ' at ' + m.healthAt : '') }, m.health + (m.deviceAdmin && m.deviceAdmin !== 'enabled' ? ' (' + m.deviceAdmin + ' on device)' : '')),
          el('td', {}, m.pool),
          el('td', {}, m.virtualServices.join(', ') || '-'),
          el('td', { class: m.lastApply === 'failed' ? 'failed' : '', title: m.lastError || m.lastApplyAt || '' }, m.lastApply + (m.lastError ? ': ' + m.lastError : ''))));
      const up = n.members.filter((m) => m.health === 'up').length;
      const count = el('span', { class: 'count' }, n.members.length + ' member' + (n.members.length === 1 ? '' : 's') + ', ' + up + ' up');
      const section = el('section', { class: 'card node', 'data-node': n.node },
        el('h3', {}, n.node || '(no node)', count),
        table(['member', 'pod', 'admin', 'health', 'pool', 'virtual services', 'last apply'], rows));
      const imp = impacts.get(n.node);
      if (imp) section.append(renderImpact(imp));
      main.append(section);
    }
  };
  let last = null;
  for (const id of ['node', 'namespace']) $(id).addEventListener('change', () => last && render(last));
  $('refresh-health').addEventListener('click', async () => {
    $('health-note').textContent = 'reading health…';
    try {
      const r = await fetch('/api/v1/health/refresh', { method: 'POST' });
      if (!r.ok) $('health-note').textContent = 'health refresh answered ' + r.status;
    } catch (err) {
      $('health-note').textContent = 'health refresh failed: ' + err;
    }
  });
  const events = new EventSource('/api/v1/dashboard/events');
  events.addEventListener('dashboard', (e) => {
    last = JSON.parse(e.data);
    $('live').textContent = 'live';
    render(last);
  });
  events.addEventListener('error', () => { $('live').textContent = 'reconnecting…'; });
})();
</script>
</body>
</html>
`;
