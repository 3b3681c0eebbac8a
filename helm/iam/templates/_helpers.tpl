{{/* vim: set filetype=mustache: */}}
{{/*
Named templates for the whole chart. Templates that take a component are called with
(dict "ctx" $ "component" "<name>"), where <name> is one of "iam.components".
*/}}

{{/* Chart name, or nameOverride. */}}
{{- define "iam.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Release-qualified name: fullnameOverride, else "<release>-<chart>" (just the release when it contains the chart name). */}}
{{- define "iam.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* "name-version" for the helm.sh/chart label. */}}
{{- define "iam.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The six processes, in the order they are rendered (JSON list; use with fromJsonArray). */}}
{{- define "iam.components" -}}
{{- list "gateway" "identity" "directory" "notification" "commerce" "audit" | toJson -}}
{{- end -}}

{{/*
The services with a database of their own (every component but the gateway), in the order their
migration Jobs are listed (JSON list; use with fromJsonArray).
*/}}
{{- define "iam.databaseServices" -}}
{{- list "directory" "identity" "notification" "commerce" "audit" | toJson -}}
{{- end -}}

{{/*
Which components each component dials over gRPC (JSON map). Sets the *_GRPC_TARGET variables
and, read the other way round, which pods the NetworkPolicy lets reach a service's gRPC port.
(Identity asks the directory for principals; commerce and audit ask it whether a caller holds a
permission now; the directory's bulk import asks identity to enrol imported TOTP factors.) That is also who each service's methods answer (their call assertions' callers,
services/<service>/src/api/grpc.ts; test/grpc-callers.test.ts holds the two together). The
gateway's readiness waits only for identity and directory (full and compact profiles); the
others it reports.
*/}}
{{- define "iam.upstreams" -}}
{{- dict "gateway" (list "identity" "directory" "notification" "commerce" "audit") "identity" (list "directory") "directory" (list "identity") "commerce" (list "directory") "audit" (list "directory") "notification" (list "directory") | toJson -}}
{{- end -}}

{{/* Name of a component's resources (Deployment, Service, ...): "<fullname>-<component>". */}}
{{- define "iam.componentFullname" -}}
{{- printf "%s-%s" (include "iam.fullname" .ctx) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels on every resource; with a component, also its app.kubernetes.io/component. */}}
{{- define "iam.labels" -}}
{{- $ctx := .ctx -}}
helm.sh/chart: {{ include "iam.chart" $ctx }}
{{ include "iam.selectorLabels" . }}
app.kubernetes.io/version: {{ $ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ $ctx.Release.Service }}
app.kubernetes.io/part-of: {{ include "iam.name" $ctx }}
{{- with $ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Immutable selector labels; with a component, they select only that component's pods. */}}
{{- define "iam.selectorLabels" -}}
app.kubernetes.io/name: {{ include "iam.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end -}}

{{/* Annotations map: commonAnnotations plus an optional extra map (.extra, which wins); may be empty. */}}
{{- define "iam.annotations" -}}
{{- $all := deepCopy (.ctx.Values.commonAnnotations | default dict) -}}
{{- range $k, $val := .extra | default dict }}{{ $_ := set $all $k $val }}{{ end -}}
{{- with $all }}{{ toYaml . }}{{ end -}}
{{- end -}}

{{/* Image reference: [registry/]repository(:tag|@digest); global.imageRegistry wins over image.registry. */}}
{{- define "iam.image" -}}
{{- $img := .Values.image -}}
{{- $registry := .Values.global.imageRegistry | default $img.registry -}}
{{- $repo := ternary (printf "%s/%s" $registry $img.repository) $img.repository (ne $registry "") -}}
{{- if $img.digest -}}
{{- printf "%s@%s" $repo $img.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (toString ($img.tag | default .Chart.AppVersion)) -}}
{{- end -}}
{{- end -}}

{{/* imagePullSecrets block from global.imagePullSecrets; may be empty. */}}
{{- define "iam.imagePullSecrets" -}}
{{- with .Values.global.imagePullSecrets -}}
imagePullSecrets:
{{- range . }}
  - name: {{ . }}
{{- end }}
{{- end -}}
{{- end -}}

{{/*
ServiceAccount a component's pods run as (called with ctx and component): its own
serviceAccount.name, else "<fullname>-<component>" when the chart creates one per component,
else serviceAccount.name or the namespace's "default".
*/}}
{{- define "iam.serviceAccountName" -}}
{{- $c := index .ctx.Values .component -}}
{{- if $c.serviceAccount.name -}}
{{- $c.serviceAccount.name -}}
{{- else if .ctx.Values.serviceAccount.create -}}
{{- include "iam.componentFullname" . -}}
{{- else -}}
{{- default "default" .ctx.Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The chart-managed Secret holding the secrets given inline in values. */}}
{{- define "iam.secretName" -}}
{{- include "iam.fullname" . -}}
{{- end -}}

{{/* The headless Service of a component's gRPC port (one DNS address per ready pod). */}}
{{- define "iam.headlessName" -}}
{{- printf "%s-headless" (include "iam.componentFullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The DNS name clients dial to reach a component: its headless Service's, in full (also the one name
a service's gRPC certificate must carry).
*/}}
{{- define "iam.grpcHost" -}}
{{- printf "%s.%s.svc.%s" (include "iam.headlessName" .) .ctx.Release.Namespace .ctx.Values.clusterDomain -}}
{{- end -}}

{{/*
The target a client dials to reach a component: its headless Service by DNS, on the pods' port
(dns:/// makes grpc-js resolve every pod address; calls go round-robin over them).
*/}}
{{- define "iam.grpcTarget" -}}
{{- $c := index .ctx.Values .component -}}
{{- printf "dns:///%s:%d" (include "iam.grpcHost" .) (int $c.port) -}}
{{- end -}}

{{/*
"true" when gRPC mutual TLS is on: grpcTls.enabled, or an issuer named in
grpcTls.certManager.issuerRef.name (the one value that turns it on with cert-manager); else empty.
*/}}
{{- define "iam.grpcTls" -}}
{{- if or .Values.grpcTls.enabled .Values.grpcTls.certManager.issuerRef.name }}true{{ end -}}
{{- end -}}

{{/*
The Secret of a component's gRPC certificate: its grpcTls.existingSecrets entry, else with
cert-manager the one its Certificate is issued into (certificate.yaml); empty when neither.
*/}}
{{- define "iam.grpcTlsSecret" -}}
{{- $t := .ctx.Values.grpcTls -}}
{{- $own := index $t.existingSecrets .component -}}
{{- if $own -}}
{{- $own -}}
{{- else if $t.certManager.issuerRef.name -}}
{{- printf "%s-grpc-tls" (include "iam.componentFullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Name of the port probes and Prometheus use: every component's ops port. */}}
{{- define "iam.opsPortName" -}}
metrics
{{- end -}}

{{/*
Every secret the application reads (JSON list). Each entry: env (variable), readers (components
that get it), requiredBy (readers that need it: validateValues insists when one of them runs),
value (inline, goes into the chart's Secret), existingSecret/key (where the pods read it from),
path (values path of the inline value, for messages), podsOnly (the components' pods read it,
never the admin Job, which runs directory's code but makes no gRPC call). Every reader also
accepts <env>_FILE, a file holding the value (the application reads any X_FILE as X):
usePasswordFiles mounts the secrets so, or a component's env names a file it mounts itself.
Adding a secret = one entry here plus its values section.
*/}}
{{- define "iam.secretSources" -}}
{{- $v := .Values -}}
{{- $s := list -}}
{{- range $svc := include "iam.databaseServices" . | fromJsonArray -}}
{{- $pg := index $v.postgresql $svc -}}
{{- $s = append $s (dict "env" (printf "%s_DATABASE_URL" (upper $svc)) "readers" (list $svc) "requiredBy" (list $svc) "value" $pg.url "existingSecret" $pg.existingSecret "key" $pg.existingSecretKey "path" (printf "postgresql.%s.url" $svc)) -}}
{{- end -}}
{{- $s = append $s (dict "env" "JWT_KEY_ENCRYPTION_KEY" "readers" (list "identity") "requiredBy" (list "identity") "value" $v.jwt.keyEncryptionKey "existingSecret" $v.jwt.existingSecret "key" $v.jwt.existingSecretKey "path" "jwt.keyEncryptionKey") -}}
{{- /* notification needs the key only to deliver mail (SMTP and EMAIL_ACTION_BASE_URL set). */ -}}
{{- $emailKeyUsers := ternary (list "identity" "notification") (list "identity") (eq (include "iam.mailDelivery" .) "true") -}}
{{- $s = append $s (dict "env" "EMAIL_ACTION_KEY" "readers" (list "identity" "notification") "requiredBy" $emailKeyUsers "value" $v.email.actionKey "existingSecret" $v.email.existingSecret "key" $v.email.existingSecretKey "path" "email.actionKey") -}}
{{- /* Every component signs and verifies its gRPC calls' assertions with it. */ -}}
{{- $components := include "iam.components" . | fromJsonArray -}}
{{- $s = append $s (dict "env" "INTERNAL_CALL_KEY" "readers" $components "requiredBy" $components "podsOnly" true "value" $v.internalCall.key "existingSecret" $v.internalCall.existingSecret "key" $v.internalCall.existingSecretKey "path" "internalCall.key") -}}
{{- $s = append $s (dict "env" "WEBHOOK_SECRET_KEY" "readers" (list "notification") "requiredBy" (list "notification") "value" $v.webhooks.secretKey "existingSecret" $v.webhooks.existingSecret "key" $v.webhooks.existingSecretKey "path" "webhooks.secretKey") -}}
{{- $s = append $s (dict "env" "AUDIT_CHECKPOINT_SIGNING_KEY" "readers" (list "audit") "requiredBy" (list "audit") "value" $v.auditCheckpoint.signingKey "existingSecret" $v.auditCheckpoint.existingSecret "key" $v.auditCheckpoint.existingSecretKey "path" "auditCheckpoint.signingKey") -}}
{{- $s = append $s (dict "env" "JWT_KEY_ENCRYPTION_KEY_PREVIOUS" "readers" (list "identity") "requiredBy" list "value" $v.jwt.previousKeyEncryptionKey "existingSecret" $v.jwt.previousKeyExistingSecret "key" $v.jwt.previousKeyExistingSecretKey "path" "jwt.previousKeyEncryptionKey") -}}
{{- $s = append $s (dict "env" "OIDC_COOKIE_KEY" "readers" (list "identity") "requiredBy" list "value" $v.oidc.cookieKey "existingSecret" $v.oidc.existingSecret "key" $v.oidc.existingSecretKey "path" "oidc.cookieKey") -}}
{{- $s = append $s (dict "env" "SMTP_URL" "readers" (list "notification") "requiredBy" list "value" $v.smtp.url "existingSecret" $v.smtp.existingSecret "key" $v.smtp.existingSecretKey "path" "smtp.url") -}}
{{- $s = append $s (dict "env" "REDIS_URL" "readers" (list "gateway") "requiredBy" list "value" $v.redis.url "existingSecret" $v.redis.existingSecret "key" $v.redis.existingSecretKey "path" "redis.url") -}}
{{- $s = append $s (dict "env" "OTEL_EXPORTER_OTLP_HEADERS" "readers" $components "requiredBy" list "value" $v.otel.headers "existingSecret" $v.otel.existingSecret "key" $v.otel.existingSecretKey "path" "otel.headers") -}}
{{- $s = append $s (dict "env" "ADMIN_PASSWORD" "readers" (list "adminBootstrap") "requiredBy" (list "adminBootstrap") "value" $v.adminBootstrap.password "existingSecret" $v.adminBootstrap.existingSecret "key" $v.adminBootstrap.existingSecretKey "path" "adminBootstrap.password") -}}
{{- toJson $s -}}
{{- end -}}

{{/* "true" when notification delivers mail over SMTP: an SMTP URL (inline or existingSecret) and EMAIL_ACTION_BASE_URL. */}}
{{- define "iam.mailDelivery" -}}
{{- $env := include "iam.plainEnv" (dict "ctx" . "component" "notification") | fromJson -}}
{{- if and (or .Values.smtp.url .Values.smtp.existingSecret) (not (empty (get $env "EMAIL_ACTION_BASE_URL"))) }}true{{ end -}}
{{- end -}}

{{/*
The secrets a reader gets (JSON list of secretSources entries): those given inline or as an
existing Secret; for a hook Job (.hook) not the podsOnly ones.
*/}}
{{- define "iam.readerSecrets" -}}
{{- $out := list -}}
{{- range $src := include "iam.secretSources" .ctx | fromJsonArray -}}
{{- if and (has $.component $src.readers) (or $src.value $src.existingSecret) (not (and $.hook $src.podsOnly)) -}}
{{- $out = append $out $src -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/*
env entries for the secrets a reader gets: a secretKeyRef each, or with usePasswordFiles <env>_FILE
naming its file in the volume of "iam.secretFilesVolume"; a secret given nowhere is left out.
*/}}
{{- define "iam.secretEnv" -}}
{{- $ctx := .ctx -}}
{{- range $src := include "iam.readerSecrets" . | fromJsonArray }}
{{- if $ctx.Values.usePasswordFiles }}
- name: {{ $src.env }}_FILE
  value: {{ printf "%s/%s" (trimSuffix "/" $ctx.Values.passwordFilesMountPath) $src.env | quote }}
{{- else }}
- name: {{ $src.env }}
  valueFrom:
    secretKeyRef:
      name: {{ $src.existingSecret | default (include "iam.secretName" $ctx) }}
      key: {{ $src.key }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
usePasswordFiles: the volume "secret-files" holding, one file per variable, the secrets of the
readers in .readers (a component; the admin Job: directory and adminBootstrap, with .hook); may
be empty.
*/}}
{{- define "iam.secretFilesVolume" -}}
{{- $ctx := .ctx -}}
{{- $hook := .hook -}}
{{- $sources := list -}}
{{- range $reader := .readers -}}
{{- range $src := include "iam.readerSecrets" (dict "ctx" $ctx "component" $reader "hook" $hook) | fromJsonArray -}}
{{- $sources = append $sources (dict "secret" (dict "name" ($src.existingSecret | default (include "iam.secretName" $ctx)) "items" (list (dict "key" $src.key "path" $src.env)))) -}}
{{- end -}}
{{- end -}}
{{- if and $ctx.Values.usePasswordFiles $sources }}
- name: secret-files
  projected:
    {{- /* 0440: root-owned, readable by the app through the pod's fsGroup (podSecurityContext). */}}
    defaultMode: 288
    sources:
      {{- toYaml $sources | nindent 6 }}
{{- end }}
{{- end -}}

{{/* The mount of "iam.secretFilesVolume" (same arguments); empty when there is no such volume. */}}
{{- define "iam.secretFilesMount" -}}
{{- if include "iam.secretFilesVolume" . }}
- name: secret-files
  mountPath: {{ .ctx.Values.passwordFilesMountPath }}
  readOnly: true
{{- end }}
{{- end -}}

{{/*
The Secrets managed outside the chart that a component's pods read (comma list; may be empty):
its existingSecrets, the NATS Secret, its gRPC TLS Secret (also one cert-manager renews) and CA.
Stakater Reloader rolls the component when one changes (reloader.enabled).
*/}}
{{- define "iam.externalSecrets" -}}
{{- $v := .ctx.Values -}}
{{- $names := list -}}
{{- range $src := include "iam.readerSecrets" . | fromJsonArray }}{{ with $src.existingSecret }}{{ $names = append $names . }}{{ end }}{{ end -}}
{{- with $v.nats.existingSecret }}{{ $names = append $names . }}{{ end -}}
{{- if include "iam.grpcTls" .ctx -}}
{{- with include "iam.grpcTlsSecret" . }}{{ $names = append $names . }}{{ end -}}
{{- with $v.grpcTls.existingCASecret }}{{ $names = append $names . }}{{ end -}}
{{- end -}}
{{- $names | uniq | join "," -}}
{{- end -}}

{{/* An env value as a string; whole numbers stay whole (values arrive as float64). */}}
{{- define "iam.envValue" -}}
{{- if kindIs "float64" . -}}
{{- int64 . | toString -}}
{{- else -}}
{{- toString . -}}
{{- end -}}
{{- end -}}

{{/*
Variables the chart derives for a component (JSON map): NATS, its own ports, the targets of its
upstreams (from the chart's Service names), JWT and email settings, the gateway's TRUST_PROXY, and
the gRPC TLS files (not for the admin Job, called with "hook" true: it dials nothing).
*/}}
{{- define "iam.computedEnv" -}}
{{- $ctx := .ctx -}}
{{- $name := .component -}}
{{- $v := $ctx.Values -}}
{{- $c := index $v $name -}}
{{- $env := dict "NATS_URL" $v.nats.url "NATS_STREAM_REPLICAS" $v.nats.streamReplicas -}}
{{- with $v.nats.existingSecret -}}
{{- $dir := trimSuffix "/" $v.nats.mountPath -}}
{{- with $v.nats.credsKey }}{{ $_ := set $env "NATS_CREDS_FILE" (printf "%s/%s" $dir .) }}{{ end -}}
{{- with $v.nats.nkeyKey }}{{ $_ := set $env "NATS_NKEY_SEED_FILE" (printf "%s/%s" $dir .) }}{{ end -}}
{{- with $v.nats.userKey }}{{ $_ := set $env "NATS_USER_FILE" (printf "%s/%s" $dir .) }}{{ end -}}
{{- with $v.nats.passwordKey }}{{ $_ := set $env "NATS_PASSWORD_FILE" (printf "%s/%s" $dir .) }}{{ end -}}
{{- with $v.nats.caKey }}{{ $_ := set $env "NATS_CA_FILE" (printf "%s/%s" $dir .) }}{{ end -}}
{{- end -}}
{{- if eq $name "gateway" -}}
{{- $_ := set $env "PORT" $c.port -}}
{{- $_ := set $env "GATEWAY_OPS_PORT" $c.opsPort -}}
{{- $_ := set $env "TRUST_PROXY" (include "iam.trustProxy" $ctx) -}}
{{- else -}}
{{- $_ := set $env (printf "%s_GRPC_PORT" (upper $name)) $c.port -}}
{{- $_ := set $env (printf "%s_METRICS_PORT" (upper $name)) $c.opsPort -}}
{{- end -}}
{{- range $up := index (include "iam.upstreams" $ctx | fromJson) $name | default list -}}
{{- if (index $v $up).enabled -}}
{{- $_ := set $env (printf "%s_GRPC_TARGET" (upper $up)) (include "iam.grpcTarget" (dict "ctx" $ctx "component" $up)) -}}
{{- end -}}
{{- end -}}
{{- $publicUrl := include "iam.publicUrl" $ctx -}}
{{- if has $name (list "gateway" "identity") -}}
{{- $_ := set $env "JWT_ALG" $v.jwt.alg -}}
{{- with $v.jwt.issuer | default $publicUrl }}{{ $_ := set $env "JWT_ISSUER" . }}{{ end -}}
{{- with $v.jwt.audience }}{{ $_ := set $env "JWT_AUDIENCE" . }}{{ end -}}
{{- with $publicUrl }}{{ $_ := set $env "PUBLIC_URL" . }}{{ end -}}
{{- end -}}
{{- if eq $name "identity" -}}
{{- $_ := set $env "IDENTITY_OP_PORT" $v.identity.opPort -}}
{{- with $v.webauthn.rpId }}{{ $_ := set $env "WEBAUTHN_RP_ID" . }}{{ end -}}
{{- with $v.webauthn.extraOrigins }}{{ $_ := set $env "WEBAUTHN_ORIGINS" (join "," .) }}{{ end -}}
{{- end -}}
{{- if and (eq $name "gateway") $v.identity.enabled -}}
{{- $_ := set $env "IDENTITY_OP_URL" (printf "http://%s:%d" (include "iam.componentFullname" (dict "ctx" $ctx "component" "identity")) (int $v.identity.opPort)) -}}
{{- end -}}
{{- if eq $name "notification" -}}
{{- with $v.email.actionBaseUrl | default $publicUrl }}{{ $_ := set $env "EMAIL_ACTION_BASE_URL" (trimSuffix "/" .) }}{{ end -}}
{{- with $v.email.from }}{{ $_ := set $env "EMAIL_FROM" . }}{{ end -}}
{{- end -}}
{{- if and (include "iam.grpcTls" $ctx) (not .hook) -}}
{{- $dir := trimSuffix "/" $v.grpcTls.mountPath -}}
{{- $_ := set $env "GRPC_TLS_CERT_FILE" (printf "%s/tls.crt" $dir) -}}
{{- $_ := set $env "GRPC_TLS_KEY_FILE" (printf "%s/tls.key" $dir) -}}
{{- $_ := set $env "GRPC_TLS_CA_FILE" (printf "%s/ca.crt" $dir) -}}
{{- if ne $name "gateway" -}}
{{- /* Which certificate each caller presents: set only when every enabled component has a name. */ -}}
{{- $peers := list -}}
{{- $complete := true -}}
{{- range $p := include "iam.components" $ctx | fromJsonArray -}}
{{- if (index $v $p).enabled -}}
{{- $pc := dict "ctx" $ctx "component" $p -}}
{{- $dns := index $v.grpcTls.peerNames $p | default "" -}}
{{- if and (not $dns) $v.grpcTls.certManager.issuerRef.name (not (index $v.grpcTls.existingSecrets $p)) -}}
{{- $dns = eq $p "gateway" | ternary (printf "%s.%s.svc.%s" (include "iam.componentFullname" $pc) $ctx.Release.Namespace $v.clusterDomain) (include "iam.grpcHost" $pc) -}}
{{- end -}}
{{- if $dns }}{{ $peers = append $peers (printf "%s=%s" $p $dns) }}{{ else }}{{ $complete = false }}{{ end -}}
{{- end -}}
{{- end -}}
{{- if and $complete $peers }}{{ $_ := set $env "GRPC_TLS_PEER_NAMES" (join "," $peers) }}{{ end -}}
{{- end -}}
{{- end -}}
{{- toJson $env -}}
{{- end -}}

{{/* Plain variables of a component: derived, then `config`, then the component's `env` (later wins). */}}
{{- define "iam.plainEnv" -}}
{{- $c := index .ctx.Values .component -}}
{{- $env := include "iam.computedEnv" . | fromJson -}}
{{- range $k, $val := .ctx.Values.config }}{{ $_ := set $env $k $val }}{{ end -}}
{{- range $k, $val := $c.env }}{{ $_ := set $env $k $val }}{{ end -}}
{{- toJson $env -}}
{{- end -}}

{{/* The container's whole env list: plain variables, secrets, then extraEnvVars. */}}
{{- define "iam.env" -}}
{{- $c := index .ctx.Values .component -}}
{{- range $k, $val := include "iam.plainEnv" . | fromJson }}
{{- if not (kindIs "invalid" $val) }}
- name: {{ $k }}
  value: {{ include "iam.envValue" $val | quote }}
{{- end }}
{{- end }}
{{- include "iam.secretEnv" . }}
{{- with $c.extraEnvVars }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
The volume of a component's gRPC TLS files ("iam.grpcTls"): its Secret's certificate and key,
and the CA from the same Secret or grpcTls.existingCASecret, under fixed names (tls.crt, tls.key,
ca.crt; computedEnv points at them).
*/}}
{{- define "iam.grpcTlsVolume" -}}
{{- $t := .ctx.Values.grpcTls -}}
- name: grpc-tls
  projected:
    {{- /* 0440: root-owned, readable by the app through the pod's fsGroup (podSecurityContext). */}}
    defaultMode: 288
    sources:
      - secret:
          name: {{ include "iam.grpcTlsSecret" . }}
          items:
            - key: {{ $t.certFilename }}
              path: tls.crt
            - key: {{ $t.certKeyFilename }}
              path: tls.key
            {{- if not $t.existingCASecret }}
            - key: {{ $t.certCAFilename }}
              path: ca.crt
            {{- end }}
      {{- with $t.existingCASecret }}
      - secret:
          name: {{ . }}
          items:
            - key: {{ $t.certCAFilename }}
              path: ca.crt
      {{- end }}
{{- end -}}

{{/*
The startup, liveness and readiness probes of a component, on its ops port (the gateway's HTTP
port). Timings from `probes.<kind>`, each key overridable in the component's `probes.<kind>`
(set key by key: sprig's merge would take an override of `false` or 0 for missing).
*/}}
{{- define "iam.probes" -}}
{{- $c := index .ctx.Values .component -}}
{{- $port := include "iam.opsPortName" . -}}
{{- range $kind, $path := dict "startup" "/health/live" "liveness" "/health/live" "readiness" "/health/ready" }}
{{- $p := deepCopy (index $.ctx.Values.probes $kind) -}}
{{- range $k, $val := index ($c.probes | default dict) $kind | default dict }}{{ $_ := set $p $k $val }}{{ end -}}
{{- if $p.enabled }}
{{ $kind }}Probe:
  httpGet:
    path: {{ $path }}
    port: {{ $port }}
  {{- toYaml (omit $p "enabled") | nindent 2 }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
Fails the release with every problem found in the values at once (Bitnami style). Called from
templates/validate.yaml; the schema checks types, this checks combinations.
*/}}
{{- define "iam.validateValues" -}}
{{- $v := .Values -}}
{{- $msgs := list -}}
{{- $components := include "iam.components" . | fromJsonArray -}}
{{- $upstreams := include "iam.upstreams" . | fromJson -}}
{{- $sources := include "iam.secretSources" . | fromJsonArray -}}
{{- /* Readers that run: enabled components, plus the admin Job (which runs directory's code with its variables). */ -}}
{{- $pods := list -}}
{{- range $name := $components }}{{ if (index $v $name).enabled }}{{ $pods = append $pods $name }}{{ end }}{{ end -}}
{{- $running := $pods -}}
{{- if $v.adminBootstrap.enabled }}{{ $running = concat $running (list "adminBootstrap" "directory") | uniq }}{{ end -}}
{{- if not $running -}}
{{- $msgs = append $msgs "iam: no component is enabled: enable at least one of gateway, identity, directory, notification, commerce, audit." -}}
{{- end -}}
{{- if not (regexMatch "^(nats|tls)://[^\\s]+$" $v.nats.url) -}}
{{- $msgs = append $msgs "iam: nats.url is required (NATS with JetStream is not bundled), e.g. nats://nats.nats.svc:4222." -}}
{{- end -}}
{{- range $src := $sources -}}
{{- $given := or $src.value $src.existingSecret -}}
{{- $readers := ternary $pods $running (not (empty $src.podsOnly)) -}}
{{- $prefix := regexReplaceAll "\\.[^.]+$" $src.path "" -}}
{{- $fileEnv := printf "%s_FILE" $src.env -}}
{{- /* A reader whose env names a file of its own (<env>_FILE) needs no value; with one it would get both, which the application refuses. */ -}}
{{- range $r := $src.readers -}}
{{- if and (has $r $readers) (ne $r "adminBootstrap") -}}
{{- if and $given (not (empty (get (include "iam.plainEnv" (dict "ctx" $ "component" $r) | fromJson) $fileEnv))) -}}
{{- $msgs = append $msgs (printf "iam: %s.env.%s and %s (or %s.existingSecret) are both set; the application refuses both: keep one." $r $fileEnv $src.path $prefix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- /* Readers that run, need the secret, and do not read it from a file of their own. */ -}}
{{- $missing := list -}}
{{- range $r := $src.requiredBy -}}
{{- if has $r $readers -}}
{{- $fromFile := and (ne $r "adminBootstrap") (not (empty (get (include "iam.plainEnv" (dict "ctx" $ "component" $r) | fromJson) $fileEnv))) -}}
{{- if not $fromFile }}{{ $missing = append $missing $r }}{{ end -}}
{{- end -}}
{{- end -}}
{{- if and $missing (not $given) -}}
{{- $orFile := "" -}}
{{- if not (has "adminBootstrap" $missing) -}}
{{- $orFile = printf ", or %s in %s.env (a mounted file)" $fileEnv (join "/" $missing) -}}
{{- end -}}
{{- $msgs = append $msgs (printf "iam: %s is required (by %s): set %s, or %s.existingSecret (key %s.existingSecretKey)%s." $src.env (join ", " $missing) $src.path $prefix $prefix $orFile) -}}
{{- end -}}
{{- end -}}
{{- if and $v.migrations.enabled $v.migrations.requireRuntimeRole -}}
{{- range $svc := include "iam.databaseServices" . | fromJsonArray -}}
{{- if and (index $v $svc).enabled (not (index $v.postgresql $svc).migration.runtimeRole) -}}
{{- $msgs = append $msgs (printf "iam: postgresql.%s.migration.runtimeRole is required (migrations.requireRuntimeRole): the role of %s's runtime URL, which the migration step grants DML only." $svc $svc) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $p := $v.ingress.extraPaths -}}
{{- if regexMatch "^/(metrics|health)(/|$)" $p -}}
{{- $msgs = append $msgs (printf "iam: ingress.extraPaths: %s is the ops port's, never routed from outside." $p) -}}
{{- end -}}
{{- end -}}
{{- if $v.httpRoute.enabled -}}
{{- if not $v.gateway.enabled -}}
{{- $msgs = append $msgs "iam: httpRoute.enabled needs gateway.enabled (the HTTPRoute routes to the gateway)." -}}
{{- end -}}
{{- if not $v.httpRoute.parentRefs -}}
{{- $msgs = append $msgs "iam: httpRoute.enabled needs httpRoute.parentRefs: the Gateway(s) to attach to, e.g. {name: public, namespace: gateway-system}." -}}
{{- end -}}
{{- end -}}
{{- range $pair := list (list "jwt.keyEncryptionKey" $v.jwt.keyEncryptionKey $v.jwt.existingSecret) (list "email.actionKey" $v.email.actionKey $v.email.existingSecret) (list "auditCheckpoint.signingKey" $v.auditCheckpoint.signingKey $v.auditCheckpoint.existingSecret) (list "internalCall.key" $v.internalCall.key $v.internalCall.existingSecret) -}}
{{- $key := index $pair 1 -}}
{{- if and $key (not (index $pair 2)) (not (regexMatch "^[A-Za-z0-9+/]{43}=$" $key)) -}}
{{- $msgs = append $msgs (printf "iam: %s must be the base64 of exactly 32 bytes (openssl rand -base64 32)." (index $pair 0)) -}}
{{- end -}}
{{- end -}}
{{- /* Key lists of a rotation: the first signs (or seals), every one verifies (or opens). */ -}}
{{- range $pair := list (list "oidc.cookieKey" $v.oidc.cookieKey $v.oidc.existingSecret) (list "jwt.previousKeyEncryptionKey" $v.jwt.previousKeyEncryptionKey $v.jwt.previousKeyExistingSecret) -}}
{{- $key := index $pair 1 -}}
{{- if and $key (not (index $pair 2)) (not (regexMatch "^[A-Za-z0-9+/]{43}=(,[A-Za-z0-9+/]{43}=)*$" $key)) -}}
{{- $msgs = append $msgs (printf "iam: %s must be a comma list of base64 keys of exactly 32 bytes each (openssl rand -base64 32)." (index $pair 0)) -}}
{{- end -}}
{{- end -}}
{{- $msgs = concat $msgs (include "iam.publicProblems" . | fromJsonArray) -}}
{{- if and $v.adminBootstrap.enabled (not $v.adminBootstrap.email) -}}
{{- $msgs = append $msgs "iam: adminBootstrap.email is required when adminBootstrap.enabled is true." -}}
{{- end -}}
{{- if and $v.ingress.enabled (not $v.gateway.enabled) -}}
{{- $msgs = append $msgs "iam: ingress.enabled needs gateway.enabled (the Ingress routes to the gateway)." -}}
{{- end -}}
{{- if and $v.smtp.url (not $v.smtp.existingSecret) (not (regexMatch "^smtps?://[^\\s]+$" $v.smtp.url)) -}}
{{- $msgs = append $msgs "iam: smtp.url must be an smtp:// or smtps:// URL, e.g. smtp://user:pass@smtp.example.com:587." -}}
{{- end -}}
{{- if $v.notification.enabled -}}
{{- $baseUrl := get (include "iam.plainEnv" (dict "ctx" $ "component" "notification") | fromJson) "EMAIL_ACTION_BASE_URL" -}}
{{- if and $baseUrl (not (regexMatch "^https?://[^\\s]+$" (toString $baseUrl))) -}}
{{- $msgs = append $msgs "iam: EMAIL_ACTION_BASE_URL (email.actionBaseUrl) must be an http:// or https:// URL, the public frontend." -}}
{{- end -}}
{{- end -}}
{{- if $v.audit.enabled -}}
{{- $auditEnv := include "iam.plainEnv" (dict "ctx" $ "component" "audit") | fromJson -}}
{{- $days := get $auditEnv "AUDIT_RETENTION_DAYS" -}}
{{- if and (hasKey $auditEnv "AUDIT_RETENTION_DAYS") (not (kindIs "invalid" $days)) -}}
{{- $d := include "iam.envValue" $days -}}
{{- if or (not (regexMatch "^[0-9]+$" $d)) (lt (int $d) 1) (gt (int $d) 36500) -}}
{{- $msgs = append $msgs (printf "iam: AUDIT_RETENTION_DAYS (audit.env) must be a whole number of days from 1 to 36500, not %q (the migration Job writes it into the audit database)." $d) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if include "iam.grpcTls" . -}}
{{- range $name := $pods -}}
{{- if not (include "iam.grpcTlsSecret" (dict "ctx" $ "component" $name)) -}}
{{- $msgs = append $msgs (printf "iam: grpcTls.enabled needs grpcTls.existingSecrets.%s: a Secret with %s, %s and %s; or grpcTls.certManager.issuerRef.name, and the chart has cert-manager issue every component's." $name $v.grpcTls.certFilename $v.grpcTls.certKeyFilename $v.grpcTls.certCAFilename) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $name := $components -}}
{{- $c := index $v $name -}}
{{- if $c.enabled -}}
{{- $env := include "iam.plainEnv" (dict "ctx" $ "component" $name) | fromJson -}}
{{- range $src := $sources -}}
{{- if hasKey $env $src.env -}}
{{- $msgs = append $msgs (printf "iam: %s is a secret and must not be set in config or %s.env: set %s or its existingSecret." $src.env $name $src.path) -}}
{{- end -}}
{{- end -}}
{{- range $up := index $upstreams $name | default list -}}
{{- $var := printf "%s_GRPC_TARGET" (upper $up) -}}
{{- /* The directory runs without identity: only an import's TOTP factors need it (they are then reported as not imported). */ -}}
{{- $optional := and (eq $name "directory") (eq $up "identity") -}}
{{- if and (not (index $v $up).enabled) (not (hasKey $env $var)) (not $optional) -}}
{{- $msgs = append $msgs (printf "iam: %s dials %s, which is disabled: enable %s or set %s in %s.env." $name $up $up $var $name) -}}
{{- end -}}
{{- end -}}
{{- if ne (empty (get $env "GRPC_TLS_CERT_FILE")) (empty (get $env "GRPC_TLS_KEY_FILE")) -}}
{{- $msgs = append $msgs (printf "iam: %s: GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE go together (set both or neither)." $name) -}}
{{- end -}}
{{- if and (ne $name "gateway") (eq (int $c.port) (int $c.opsPort)) -}}
{{- $msgs = append $msgs (printf "iam: %s.port and %s.opsPort must differ." $name $name) -}}
{{- end -}}
{{- if $c.autoscaling.enabled -}}
{{- if gt (int $c.autoscaling.minReplicas) (int $c.autoscaling.maxReplicas) -}}
{{- $msgs = append $msgs (printf "iam: %s.autoscaling.minReplicas must not exceed maxReplicas." $name) -}}
{{- end -}}
{{- if not (or $c.autoscaling.targetCPUUtilizationPercentage $c.autoscaling.targetMemoryUtilizationPercentage) -}}
{{- $msgs = append $msgs (printf "iam: %s.autoscaling needs targetCPUUtilizationPercentage or targetMemoryUtilizationPercentage." $name) -}}
{{- end -}}
{{- end -}}
{{- if and $c.pdb.create (not (eq (toString $c.pdb.minAvailable) "")) (not (eq (toString $c.pdb.maxUnavailable) "")) -}}
{{- $msgs = append $msgs (printf "iam: %s.pdb: set minAvailable or maxUnavailable, not both." $name) -}}
{{- end -}}
{{- $shutdownMs := int (get $env "SHUTDOWN_TIMEOUT_MS" | default 10000) -}}
{{- if le (int $c.terminationGracePeriodSeconds) (add (div $shutdownMs 1000) $v.preStopSleepSeconds) -}}
{{- $msgs = append $msgs (printf "iam: %s.terminationGracePeriodSeconds must exceed preStopSleepSeconds + SHUTDOWN_TIMEOUT_MS/1000 (%d s), or pods are killed mid-shutdown." $name (add (div $shutdownMs 1000) $v.preStopSleepSeconds)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $v.gateway.enabled -}}
{{- $gatewayEnv := include "iam.plainEnv" (dict "ctx" $ "component" "gateway") | fromJson -}}
{{- $profiles := $gatewayEnv.GATEWAY_PROFILES -}}
{{- if not (kindIs "invalid" $profiles) -}}
{{- range $p := splitList "," (toString $profiles) -}}
{{- if and (trim $p) (not (has (trim $p) (list "full" "compact" "edge"))) -}}
{{- $msgs = append $msgs (printf "iam: GATEWAY_PROFILES: unknown profile %q (allowed: full, compact, edge; empty = minimal)." (trim $p)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $introspection := get $gatewayEnv "GRAPHQL_INTROSPECTION" -}}
{{- if and (hasKey $gatewayEnv "GRAPHQL_INTROSPECTION") (not (kindIs "invalid" $introspection)) -}}
{{- if not (has (include "iam.envValue" $introspection) (list "public" "authenticated" "off")) -}}
{{- $msgs = append $msgs (printf "iam: GRAPHQL_INTROSPECTION (gateway.env) must be public, authenticated or off, not %q (quote \"off\": unquoted, YAML reads it as false)." (include "iam.envValue" $introspection)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $msgs -}}
{{- fail (printf "\n\nVALUES VALIDATION:\n%s" (join "\n" $msgs)) -}}
{{- end -}}
{{- end -}}
