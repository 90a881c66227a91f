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
