{{/*
Names and labels, and the one way RBAC reaches this chart: files/*.yaml are copies of the manifests in
infra/k8s/functions and infra/k8s/bridge (written by `npm run chart:sync`; a unit test fails when one
differs), and the templates take rules, roleRefs and subjects from them, so the chart and the kustomize
manifests cannot grant different things.
*/}}

{{- define "nodeclaim-azure.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "nodeclaim-azure.fullname" -}}
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

{{- define "nodeclaim-azure.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: nodeclaim-azure
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- with .Values.additionalLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "nodeclaim-azure.bridgeLabels" -}}
{{ include "nodeclaim-azure.labels" . }}
app.kubernetes.io/name: event-bridge
{{- end }}

{{- define "nodeclaim-azure.bridgeSelectorLabels" -}}
app.kubernetes.io/name: event-bridge
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
One object of a manifest file, by kind and metadata.name, as YAML (empty if there is none; the caller
fails then, so a renamed object in infra/k8s cannot silently drop a permission).
Usage: include "nodeclaim-azure.manifestObject" (list $ <file under files/> "ClusterRole" "name")
*/}}
{{- define "nodeclaim-azure.manifestObject" -}}
{{- $root := index . 0 }}
{{- $file := index . 1 }}
{{- $kind := index . 2 }}
{{- $name := index . 3 }}
{{- range $document := regexSplit "(?m)^---[ \t]*$" ($root.Files.Get $file) -1 }}
{{- $object := fromYaml $document }}
{{- if and (eq (toString (get $object "kind")) $kind) (eq (toString (dig "metadata" "name" "" $object)) $name) }}
{{- toYaml $object }}
{{- end }}
{{- end }}
{{- end }}

{{- define "nodeclaim-azure.requireObject" -}}
{{- $yaml := include "nodeclaim-azure.manifestObject" . }}
{{- if not $yaml }}
{{- fail (printf "%s has no %s %s" (index . 1) (index . 2) (index . 3)) }}
{{- end }}
{{- $yaml }}
{{- end }}

{{- define "nodeclaim-azure.priorityClassName" -}}
{{- if .Values.priorityClassName }}
{{- .Values.priorityClassName }}
{{- else if eq .Release.Namespace "kube-system" }}
{{- "system-cluster-critical" }}
{{- end }}
{{- end }}
