/**
 * A CustomResourceDefinition read as the kinds it serves: one ResourceType per served version,
 * sharing one storage, with its schema, printer columns and subresources; what the apiextensions
 * server refuses in a CRD (names that do not match, no storage version, a taken plural); and the
 * status it writes back (NamesAccepted, Established, acceptedNames, storedVersions).
 */
import type { Json, JsonObject } from '../openapi.ts';
import type { CustomKind, PrinterColumn, ResourceType } from '../kinds.ts';
import { forbidden, invalidValue, required } from '../validate.ts';
import type { StatusCause } from '../status.ts';
import { isJsonObject } from '../json.ts';

const str = (v: Json | undefined): string => (typeof v === 'string' ? v : '');
const strings = (v: Json | undefined): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

interface CrdSpec {
  group: string;
  plural: string;
  singular: string;
  kind: string;
  shortNames: string[];
  categories: string[];
  namespaced: boolean;
  versions: JsonObject[];
}

function specOf(crd: JsonObject): CrdSpec {
  const spec = isJsonObject(crd.spec) ? crd.spec : {};
  const names = isJsonObject(spec.names) ? spec.names : {};
  const kind = str(names.kind);
  return {
    group: str(spec.group),
    plural: str(names.plural),
    singular: str(names.singular) || kind.toLowerCase(),
    kind,
    shortNames: strings(names.shortNames),
    categories: strings(names.categories),
    namespaced: spec.scope !== 'Cluster',
    versions: Array.isArray(spec.versions) ? spec.versions.filter(isJsonObject) : [],
  };
}

/** The group written in reverse, as OpenAPI definition names spell it (gateway.networking.k8s.io -> io.k8s.networking.gateway). */
export function definitionName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

function printerColumns(v: JsonObject): PrinterColumn[] {
  const cols = Array.isArray(v.additionalPrinterColumns)
    ? v.additionalPrinterColumns.filter(isJsonObject)
    : [];
  return cols.map((c) => ({
    name: str(c.name),
    type: str(c.type) || 'string',
    jsonPath: str(c.jsonPath),
    ...(typeof c.format === 'string' ? { format: c.format } : {}),
    ...(typeof c.description === 'string' ? { description: c.description } : {}),
    ...(typeof c.priority === 'number' ? { priority: c.priority } : {}),
  }));
}

/** The kinds a CRD serves: one per version with `served: true`. */
export function typesOf(crd: JsonObject): ResourceType[] {
  const s = specOf(crd);
  const crdName = str(isJsonObject(crd.metadata) ? crd.metadata.name : undefined);
  const storageVersion = str(s.versions.find((v) => v.storage === true)?.name);
  return s.versions
    .filter((v) => v.served === true)
    .map((v) => {
      const version = str(v.name);
      const schema =
        isJsonObject(v.schema) && isJsonObject(v.schema.openAPIV3Schema)
          ? v.schema.openAPIV3Schema
          : undefined;
      const custom: CustomKind = { crdName, storageVersion, schema, printerColumns: printerColumns(v) };
      return {
        group: s.group,
        version,
        kind: s.kind,
        plural: s.plural,
        singular: s.singular,
        namespaced: s.namespaced,
        shortNames: s.shortNames,
        hasStatus: isJsonObject(v.subresources) && isJsonObject(v.subresources.status),
        definition: definitionName(s.group, version, s.kind),
        nameRule: 'subdomain',
        fields: [],
        storage: `${s.plural}.${s.group}`,
        ...(s.categories.length ? { categories: s.categories } : {}),
        custom,
      } satisfies ResourceType;
    });
}

const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const KIND = /^[A-Za-z][A-Za-z0-9]*$/;

/** What the apiextensions server refuses in a CRD's spec. `taken` says whether a plural is served already. */
export function validateCrd(
  crd: JsonObject,
  taken: (group: string, plural: string) => boolean,
): StatusCause[] {
  const s = specOf(crd);
  const name = str(isJsonObject(crd.metadata) ? crd.metadata.name : undefined);
  const out: StatusCause[] = [];
  if (!s.group) out.push(required('spec.group'));
  else if (!GROUP.test(s.group))
    out.push(invalidValue('spec.group', s.group, 'should be a domain with at least one dot'));
  if (!s.plural) out.push(required('spec.names.plural'));
  else if (!DNS_LABEL.test(s.plural))
    out.push(
      invalidValue(
        'spec.names.plural',
        s.plural,
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'",
      ),
    );
  if (!s.kind) out.push(required('spec.names.kind'));
  else if (!KIND.test(s.kind))
    out.push(
      invalidValue(
        'spec.names.kind',
        s.kind,
        'may have mixed case, but should otherwise match: ^[a-z][a-z0-9]*$',
      ),
    );
  if (s.plural && s.group && name !== `${s.plural}.${s.group}`)
    out.push(invalidValue('metadata.name', name, `must be spec.names.plural+"."+spec.group`));
  const scope = isJsonObject(crd.spec) ? crd.spec.scope : undefined;
  if (scope !== 'Namespaced' && scope !== 'Cluster')
    out.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(scope ?? '')}: supported values: "Cluster", "Namespaced"`,
      field: 'spec.scope',
    });
  if (s.versions.length === 0)
    out.push(required('spec.versions', 'must have exactly one version marked as storage version'));
  const storage = s.versions.filter((v) => v.storage === true).length;
  if (s.versions.length > 0 && storage !== 1)
    out.push(
      invalidValue(
        'spec.versions',
        s.versions.map((v) => str(v.name)),
        'must have exactly one version marked as storage version',
      ),
    );
  s.versions.forEach((v, i) => {
    if (!DNS_LABEL.test(str(v.name)))
      out.push(
        invalidValue(
          `spec.versions[${i}].name`,
          str(v.name),
          'a DNS-1035 label must consist of lower case alphanumeric characters',
        ),
      );
    const schema = isJsonObject(v.schema) ? v.schema.openAPIV3Schema : undefined;
    if (!isJsonObject(schema))
      out.push(required(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'));
  });
  if (s.group && s.plural && taken(s.group, s.plural))
    out.push(forbidden('spec.names.plural', `${s.plural}.${s.group} is already served by a built-in kind`));
  return out;
}

/** The status the apiextensions controllers write once a CRD is read: its names accepted and established. */
export function crdStatus(crd: JsonObject, now: string): JsonObject {
  const s = specOf(crd);
  const prev = isJsonObject(crd.status) ? crd.status : {};
  const storage = str(s.versions.find((v) => v.storage === true)?.name);
  const stored = [...new Set([...strings(prev.storedVersions), storage].filter(Boolean))];
  const condition = (type: string, reason: string, message: string): JsonObject => ({
    type,
    status: 'True',
    lastTransitionTime: now,
    reason,
    message,
  });
  return {
    acceptedNames: {
      plural: s.plural,
      singular: s.singular,
      kind: s.kind,
      listKind: `${s.kind}List`,
      ...(s.shortNames.length ? { shortNames: s.shortNames } : {}),
      ...(s.categories.length ? { categories: s.categories } : {}),
    },
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
      condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
    ],
    storedVersions: stored,
  };
}
