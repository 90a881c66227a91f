{{- define "npl-lb.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "npl-lb.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "npl-lb.labels" -}}
app.kubernetes.io/name: {{ include "npl-lb.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "npl-lb.selector" -}}
app.kubernetes.io/name: {{ include "npl-lb.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "npl-lb.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "npl-lb.credentialsSecret" -}}
{{- .Values.credentials.existingSecret | default (printf "%s-credentials" (include "npl-lb.fullname" .)) -}}
{{- end -}}

{{- define "npl-lb.needsCredentials" -}}
{{- if or (has .Values.adapter.type (list "avi" "f5")) (and (eq .Values.adapter.type "haproxy") (eq .Values.adapter.haproxy.transport "dataplane")) -}}true{{- end -}}
{{- end -}}

{{/* The runtime transport drives an HAProxy on the node through a directory shared with it. */}}
{{- define "npl-lb.haproxyMount" -}}
{{- if and (eq .Values.adapter.type "haproxy") (ne .Values.adapter.haproxy.transport "dataplane") -}}true{{- end -}}
{{- end -}}

{{- define "npl-lb.controllerServiceAccount" -}}
{{- .Values.controller.serviceAccount.name | default (printf "%s-controller" (include "npl-lb.fullname" .)) -}}
{{- end -}}

{{- define "npl-lb.agentServiceAccount" -}}
{{- .Values.agent.serviceAccount.name | default (printf "%s-agent" (include "npl-lb.fullname" .)) -}}
{{- end -}}

{{/* The runtime transport drives one HAProxy on one node: one replica, pinned beside it. */}}
{{- define "npl-lb.controllerReplicas" -}}
{{- if include "npl-lb.haproxyMount" . -}}1{{- else -}}{{ .Values.controller.replicas }}{{- end -}}
{{- end -}}

{{/* The load balancer's credentials, from the Secret, as NPL_LB_<VENDOR>_USERNAME/PASSWORD. */}}
{{- define "npl-lb.credentialsEnv" -}}
{{- if include "npl-lb.needsCredentials" . }}
{{- $vendor := .Values.adapter.type | upper }}
- name: NPL_LB_{{ $vendor }}_USERNAME
  valueFrom: { secretKeyRef: { name: {{ include "npl-lb.credentialsSecret" . }}, key: username } }
- name: NPL_LB_{{ $vendor }}_PASSWORD
  valueFrom: { secretKeyRef: { name: {{ include "npl-lb.credentialsSecret" . }}, key: password } }
{{- end }}
{{- end -}}

{{/*
Whether the agent runs: it is asked for and members are NodePortLocal mappings (in NodePort and
ClusterIP modes nothing maps ports on the nodes, so no privileged DaemonSet is deployed).
*/}}
{{- define "npl-lb.agentEnabled" -}}
{{- if and .Values.agent.enabled (eq .Values.serviceType "NodePortLocal") }}true{{ end -}}
{{- end }}
