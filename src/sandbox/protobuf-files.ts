/**
 * The Kubernetes protobuf definitions bundled with the sandbox (src/sandbox/proto/, copied by
 * scripts/extract-protos.ts from kubernetes/api and kubernetes/apimachinery at the release the
 * sandbox speaks): the API groups of the built-in kinds it serves, and what they import.
 */
export const PROTO_FILES = [
  'k8s.io/apimachinery/pkg/runtime/generated.proto',
  'k8s.io/apimachinery/pkg/runtime/schema/generated.proto',
  'k8s.io/apimachinery/pkg/util/intstr/generated.proto',
  'k8s.io/apimachinery/pkg/api/resource/generated.proto',
  'k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto',
  'k8s.io/api/core/v1/generated.proto',
  'k8s.io/api/apps/v1/generated.proto',
  'k8s.io/api/batch/v1/generated.proto',
  'k8s.io/api/coordination/v1/generated.proto',
  'k8s.io/api/discovery/v1/generated.proto',
  'k8s.io/api/events/v1/generated.proto',
  'k8s.io/api/networking/v1/generated.proto',
  'k8s.io/api/policy/v1/generated.proto',
  'k8s.io/api/rbac/v1/generated.proto',
  'k8s.io/api/admissionregistration/v1/generated.proto',
] as const;
