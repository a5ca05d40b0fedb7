{{/* Labels of every object: those of examples/deploy plus Helm's. */}}
{{- define "ordinal.labels" -}}
app.kubernetes.io/name: ordinal
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Selector labels of a component (the Deployment selectors of examples/deploy). */}}
{{- define "ordinal.selectorLabels" -}}
app.kubernetes.io/name: ordinal
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "ordinal.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The pod's security context and the container's, as in examples/deploy. */}}
{{- define "ordinal.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
seccompProfile: {type: RuntimeDefault}
{{- end -}}
{{- define "ordinal.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities: {drop: ["ALL"]}
{{- end -}}

{{/* Preferred anti-affinity over nodes for a component, unless affinity is set. */}}
{{- define "ordinal.affinity" -}}
{{- if .affinity -}}
{{ toYaml .affinity }}
{{- else -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
  - weight: 100
    podAffinityTerm:
      topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          app.kubernetes.io/name: ordinal
          app.kubernetes.io/component: {{ .component }}
{{- end -}}
{{- end -}}

{{- define "ordinal.webhookServiceName" -}}ordinal-webhook{{- end -}}
{{- define "ordinal.webhookSecretName" -}}ordinal-webhook-tls{{- end -}}
