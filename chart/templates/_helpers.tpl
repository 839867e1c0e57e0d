{{/* Chart name, overridable. */}}
{{- define "sparkhooks.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name: the release name when it already contains the chart name (the usual
"helm install sparkhooks ..."), else "<release>-<chart>". It names the Service, so it is what the
hook URLs and the webhook registration point at.
*/}}
{{- define "sparkhooks.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "sparkhooks.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "sparkhooks.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sparkhooks.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "sparkhooks.labels" -}}
helm.sh/chart: {{ include "sparkhooks.chart" . }}
{{ include "sparkhooks.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "sparkhooks.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "sparkhooks.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "sparkhooks.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Secret holding the webhook's serving certificate (tls.crt, tls.key, ca.crt). */}}
{{- define "sparkhooks.webhookSecretName" -}}
{{- printf "%s-webhook-tls" (include "sparkhooks.fullname" .) }}
{{- end }}

{{/* cert-manager Certificate for the serving certificate; the CA injector reads it. */}}
{{- define "sparkhooks.webhookCertificateName" -}}
{{- printf "%s-webhook" (include "sparkhooks.fullname" .) }}
{{- end }}

{{- define "sparkhooks.policyConfigMapName" -}}
{{- printf "%s-policy" (include "sparkhooks.fullname" .) }}
{{- end }}

{{/*
Base URL of the hook listener as Metacontroller reaches it. The in-cluster Service name resolves
through the pod's DNS search path; set metacontroller.hookBaseURL when Metacontroller runs
elsewhere or the cluster needs the full domain.
*/}}
{{- define "sparkhooks.hookBaseURL" -}}
{{- if .Values.metacontroller.hookBaseURL }}
{{- .Values.metacontroller.hookBaseURL | trimSuffix "/" }}
{{- else }}
{{- printf "http://%s.%s.svc:%d" (include "sparkhooks.fullname" .) .Release.Namespace (int .Values.service.httpPort) }}
{{- end }}
{{- end }}

{{/* DNS names the webhook's serving certificate must cover. */}}
{{- define "sparkhooks.webhookDNSNames" -}}
{{- $svc := include "sparkhooks.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.%s" $svc $ns .Values.clusterDomain) | toJson }}
{{- end }}

{{/*
The History Server's own name and labels: not the hook server's selector labels, so that the
hooks' Service, PodDisruptionBudget and NetworkPolicy never select its Pod.
*/}}
{{- define "sparkhooks.historyServer.fullname" -}}
{{- printf "%s-history" (include "sparkhooks.fullname" . | trunc 55 | trimSuffix "-") }}
{{- end }}

{{- define "sparkhooks.historyServer.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sparkhooks.name" . | trunc 48 | trimSuffix "-" }}-history-server
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: history-server
{{- end }}

{{- define "sparkhooks.historyServer.labels" -}}
helm.sh/chart: {{ include "sparkhooks.chart" . }}
{{ include "sparkhooks.historyServer.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.historyServer.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The local path of a file: event log dir (file:/p or file:///p), where its volume is mounted. */}}
{{- define "sparkhooks.eventLog.mountPath" -}}
{{- .Values.eventLog.dir | trimPrefix "file://" | trimPrefix "file:" }}
{{- end }}

{{/*
--history-server-url: historyServer.url, else the Ingress's URL, else the Service's in-cluster
URL; empty without a History Server.
*/}}
{{- define "sparkhooks.historyServer.url" -}}
{{- $hs := .Values.historyServer }}
{{- if $hs.url }}
{{- $hs.url }}
{{- else if and $hs.enabled $hs.ingress.enabled $hs.ingress.host }}
{{- printf "%s://%s%s" (ternary "https" "http" (gt (len $hs.ingress.tls) 0)) $hs.ingress.host (trimSuffix "/" $hs.ingress.path) }}
{{- else if $hs.enabled }}
{{- printf "http://%s.%s.svc:%d" (include "sparkhooks.historyServer.fullname" .) .Release.Namespace (int $hs.service.port) }}
{{- end }}
{{- end }}

{{/*
The job namespaces the chart grants per namespace (gc, Events), as a JSON list: spark.jobNamespaces,
or none when spark.jobNamespaceSelector is set, since the namespaces it selects are not known when
the chart is installed and the grants are then cluster-wide.
*/}}
{{- define "sparkhooks.fixedJobNamespaces" -}}
{{- if .Values.spark.jobNamespaceSelector -}}
[]
{{- else -}}
{{- .Values.spark.jobNamespaces | default list | toJson -}}
{{- end -}}
{{- end }}

{{/*
spark.jobNamespaceSelector, a label selector in kubectl's syntax as Kubeflow's chart takes it
('spark-operator=enabled,env in (prod,staging),!legacy'), as the matchExpressions of a
LabelSelector, for the webhooks' namespaceSelector. Set-based terms (in, notin, key, !key) and
equality terms (=, ==, !=) are what a LabelSelector can say; anything else fails the install.
*/}}
{{- define "sparkhooks.jobNamespaceSelectorExpressions" -}}
{{- range $term := regexFindAll "[^,(]+(\\([^)]*\\))?" . -1 }}
{{- $term = trim $term }}
{{- if regexMatch "^![^\\s!=(),]+$" $term }}
- key: {{ trimPrefix "!" $term | quote }}
  operator: DoesNotExist
{{- else if regexMatch "^[^\\s!=(),]+$" $term }}
- key: {{ $term | quote }}
  operator: Exists
{{- else if regexMatch "^[^\\s!=(),]+\\s+(in|notin)\\s*\\([^)]*\\)$" $term }}
- key: {{ regexFind "^[^\\s!=(),]+" $term | quote }}
  operator: {{ ternary "NotIn" "In" (regexMatch "^[^\\s]+\\s+notin" $term) }}
  values:
  {{- range splitList "," (regexFind "\\([^)]*\\)" $term | trimPrefix "(" | trimSuffix ")") }}
    - {{ trim . | quote }}
  {{- end }}
{{- else if regexMatch "^[^\\s!=(),]+\\s*!=\\s*[^\\s!=(),]*$" $term }}
- key: {{ regexFind "^[^\\s!=(),]+" $term | quote }}
  operator: NotIn
  values:
    - {{ regexReplaceAll "^[^!]*!=\\s*" $term "" | quote }}
{{- else if regexMatch "^[^\\s!=(),]+\\s*==?\\s*[^\\s!=(),]*$" $term }}
- key: {{ regexFind "^[^\\s!=(),]+" $term | quote }}
  operator: In
  values:
    - {{ regexReplaceAll "^[^=]*==?\\s*" $term "" | quote }}
{{- else }}
{{- fail (printf "spark.jobNamespaceSelector: %q is not a term a LabelSelector can say (key, !key, key=value, key!=value, key in (a,b), key notin (a,b))" $term) }}
{{- end }}
{{- end }}
{{- end }}
