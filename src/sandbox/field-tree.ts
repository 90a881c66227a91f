/**
 * Sets of fields in the FieldsV1 form (`metadata.managedFields[].fieldsV1`): a tree whose keys are
 * path elements (`f:<field>`, `k:<keys>`, `v:<value>`, `.`), and the set operations server-side
 * apply needs on them. Pure.
 */

/** A set of fields in the FieldsV1 form: a tree whose keys are path elements. */
export type FieldTree = { [element: string]: FieldTree };

/** The leaf paths of a tree (a node without children, or an element's `.`). */
export function leaves(t: FieldTree, prefix: string[] = [], out: string[][] = []): string[][] {
  for (const k of Object.keys(t)) {
    const sub = t[k]!;
    prefix.push(k);
    if (ownsAny(sub)) leaves(sub, prefix, out);
    else out.push([...prefix]);
    prefix.pop();
  }
  return out;
}

/** Whether a tree owns any field (a tree with a child has a leaf beneath it). */
export const ownsAny = (t: FieldTree): boolean => {
  for (const _ in t) return true;
  return false;
};

export const has = (t: FieldTree, path: string[]): boolean => {
  let cur: FieldTree | undefined = t;
  for (const el of path) {
    cur = cur?.[el];
    if (cur === undefined) return false;
  }
  return true;
};

/** Whether the tree owns exactly this field (a leaf of it), not only fields beneath it. */
export function ownsLeaf(t: FieldTree, path: string[]): boolean {
  let cur: FieldTree | undefined = t;
  for (const el of path) {
    cur = cur?.[el];
    if (cur === undefined) return false;
  }
  return Object.keys(cur).length === 0;
}

export function tree(paths: string[][]): FieldTree {
  const out: FieldTree = {};
  for (const p of paths) {
    let cur = out;
    for (const el of p) cur = cur[el] ??= {};
  }
  return out;
}

export const union = (a: FieldTree, b: FieldTree): FieldTree => tree([...leaves(a), ...leaves(b)]);

/** A path as one string (elements never hold NUL: they are JSON or field names). */
const pathKey = (p: string[]): string => p.join('\u0000');

/** The tree without the leaves listed (a Set of them: linear, however many are dropped). */
export const without = (t: FieldTree, drop: string[][]): FieldTree => {
  if (drop.length === 0) return t;
  const gone = new Set(drop.map(pathKey));
  return tree(leaves(t).filter((p) => !gone.has(pathKey(p))));
};

export const keepOnly = (t: FieldTree, keep: (p: string[]) => boolean): FieldTree =>
  tree(leaves(t).filter(keep));

/**
 * Whether two field trees hold the same fields: cheaper than a general deep compare. A tree's keys
 * are path elements (`f:`, `k:`, `v:`, `.`), never an inherited property's name, so they are read
 * by plain indexing.
 */
export function sameTree(a: FieldTree, b: FieldTree): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    const sb = b[k];
    if (sb === undefined || !sameTree(a[k]!, sb)) return false;
  }
  return true;
}
