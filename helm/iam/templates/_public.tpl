{{/* vim: set filetype=mustache: */}}
{{/*
The public face of the platform: its address (publicUrl) and what derives from it, the paths
routed to the gateway, the proxies it trusts, and the checks of those values (called by
iam.validateValues).
*/}}

{{/*
The platform's public address: publicUrl without a trailing slash; empty when unset. The
provider's issuer and every token's `iss` (PUBLIC_URL, JWT_ISSUER), the console's redirect URIs
and the passkeys' RP ID (identity derives them from PUBLIC_URL), and the mail links
(EMAIL_ACTION_BASE_URL) derive from it unless jwt.issuer or email.actionBaseUrl say otherwise.
*/}}
{{- define "iam.publicUrl" -}}
{{- trimSuffix "/" (.Values.publicUrl | default "") -}}
{{- end -}}

{{/* "true" when the values describe a production install: `production`, or an Ingress with TLS. */}}
{{- define "iam.production" -}}
{{- if or .Values.production (and .Values.ingress.enabled .Values.ingress.tls) }}true{{ end -}}
{{- end -}}

{{/*
The paths routed to the gateway (Ingress, HTTPRoute), JSON list of {path, exact}: every path its
HTTP port serves to the public (helm/test/routing.test.ts builds the gateway with the rendered
env and compares its route table), never the ops routes /metrics, /health/live, /health/ready.
Prefixes: the API, the JWKS and discovery, the OpenID provider, SCIM (/scim/v2), the console (and its assets);
exact: the hosted pages, the Compact profile's /health, the edge's /healthz, GraphiQL (only with
GRAPHQL_IDE); /docs with ingress.exposeDocs; ingress.extraPaths as prefixes.
*/}}
{{- define "iam.publicPaths" -}}
{{- $v := .Values -}}
{{- $gatewayEnv := include "iam.plainEnv" (dict "ctx" . "component" "gateway") | fromJson -}}
{{- $paths := list -}}
{{- range $p := list "/api" "/.well-known" "/oidc" "/scim" "/console" }}{{ $paths = append $paths (dict "path" $p "exact" false) }}{{ end -}}
{{- range $p := list "/account" "/reset-password" "/verify-email" "/health" "/healthz" }}{{ $paths = append $paths (dict "path" $p "exact" true) }}{{ end -}}
{{- if eq (include "iam.envValue" (get $gatewayEnv "GRAPHQL_IDE" | default false)) "true" }}{{ $paths = append $paths (dict "path" "/graphiql" "exact" true) }}{{ end -}}
{{- if $v.ingress.exposeDocs }}{{ $paths = append $paths (dict "path" "/docs" "exact" false) }}{{ end -}}
{{- range $p := $v.ingress.extraPaths }}{{ $paths = append $paths (dict "path" $p "exact" false) }}{{ end -}}
{{- $seen := list -}}
{{- $out := list -}}
{{- range $p := $paths }}{{ if not (has $p.path $seen) }}{{ $seen = append $seen $p.path }}{{ $out = append $out $p }}{{ end }}{{ end -}}
{{- toJson $out -}}
{{- end -}}

{{/*
TRUST_PROXY of the gateway: trustedProxies as a comma list (Fastify's trustProxy: only a request
arriving from one of them has its X-Forwarded-For, -Proto and -Host believed), or false when the
list is empty. gateway.env.TRUST_PROXY overrides it.
*/}}
{{- define "iam.trustProxy" -}}
{{- if .Values.trustedProxies }}{{ join "," .Values.trustedProxies }}{{ else }}false{{ end -}}
{{- end -}}

{{/* How many gateway pods may run at once: the HPA's maximum, else replicaCount. */}}
{{- define "iam.gatewayMaxReplicas" -}}
{{- $g := .Values.gateway -}}
{{- if $g.autoscaling.enabled }}{{ int $g.autoscaling.maxReplicas }}{{ else }}{{ int $g.replicaCount }}{{ end -}}
{{- end -}}

{{/*
Problems with the public address, the proxies and the gateway's shared state (JSON list of
messages, for iam.validateValues): publicUrl required with an Ingress or HTTPRoute and in
production, an origin, https in production, named by the Ingress's hosts and the HTTPRoute's
hostnames, the one issuer; trustedProxies required behind an Ingress or HTTPRoute, CIDRs or
addresses; Redis when more than one gateway pod may run (unless redis.acceptPerPodLimits).
*/}}
{{- define "iam.publicProblems" -}}
{{- $v := .Values -}}
{{- $msgs := list -}}
{{- $url := include "iam.publicUrl" . -}}
{{- $routed := and $v.gateway.enabled (or $v.ingress.enabled $v.httpRoute.enabled) -}}
{{- $production := include "iam.production" . -}}
{{- $gatewayEnv := include "iam.plainEnv" (dict "ctx" . "component" "gateway") | fromJson -}}
{{- if not $url -}}
{{- if $routed -}}
{{- $msgs = append $msgs "iam: publicUrl is required with an Ingress or HTTPRoute: the address browsers and apps reach the gateway at, e.g. https://iam.example.com. The provider's issuer and every token's iss, the console's redirect URIs, the passkeys' RP ID and the links in mails derive from it (without it they would all be http://localhost:8080, and nobody could sign in)." -}}
{{- else if $production -}}
{{- $msgs = append $msgs "iam: publicUrl is required in production (production: true): the https:// address browsers and apps reach the gateway at, e.g. https://iam.example.com." -}}
{{- end -}}
{{- if $v.jwt.issuer -}}
{{- $msgs = append $msgs "iam: jwt.issuer is set but publicUrl is not: set publicUrl, the public address (the provider's issuer; jwt.issuer defaults to it), and leave jwt.issuer empty." -}}
{{- end -}}
{{- else if not (regexMatch "^https?://[^/?#\\s]+/?$" $v.publicUrl) -}}
{{- $msgs = append $msgs (printf "iam: publicUrl must be an origin, scheme://host[:port] with no path, e.g. https://iam.example.com (the gateway serves the provider, the console and the hosted pages at the root of its host), not %q." $v.publicUrl) -}}
{{- else -}}
{{- if and $production (not (hasPrefix "https://" $url)) -}}
{{- $msgs = append $msgs (printf "iam: publicUrl must be an https:// URL in production (production: true, or an Ingress with TLS): the provider's cookies are Secure and passkeys need a secure origin; not %q." $url) -}}
{{- end -}}
{{- $host := regexReplaceAll "^https?://([^:/]+).*$" $url "${1}" -}}
{{- if $v.ingress.enabled -}}
{{- $hosts := list -}}
{{- range $v.ingress.hosts }}{{ with .host }}{{ $hosts = append $hosts . }}{{ end }}{{ end -}}
{{- if and $hosts (not (has $host $hosts)) -}}
{{- $msgs = append $msgs (printf "iam: publicUrl's host %s is not among ingress.hosts (%s): the provider would advertise an address the Ingress does not route." $host (join ", " $hosts)) -}}
{{- end -}}
{{- end -}}
{{- if and $v.httpRoute.enabled $v.httpRoute.hostnames (not (has $host $v.httpRoute.hostnames)) -}}
{{- $msgs = append $msgs (printf "iam: publicUrl's host %s is not among httpRoute.hostnames (%s): the provider would advertise an address the HTTPRoute does not route." $host (join ", " $v.httpRoute.hostnames)) -}}
{{- end -}}
{{- with $v.webauthn.rpId -}}
{{- if not (or (eq $host (lower .)) (hasSuffix (printf ".%s" (lower .)) $host)) -}}
{{- $msgs = append $msgs (printf "iam: webauthn.rpId (%s) must be publicUrl's host (%s) or a domain it is under: a passkey ceremony on publicUrl could never verify." . $host) -}}
{{- end -}}
{{- end -}}
{{- if and $v.jwt.issuer (ne (trimSuffix "/" $v.jwt.issuer) $url) -}}
{{- $msgs = append $msgs (printf "iam: jwt.issuer (%s) differs from publicUrl (%s): the provider's tokens carry publicUrl as their issuer and the gateway accepts one issuer only, so it would refuse them. Leave jwt.issuer empty (it defaults to publicUrl)." $v.jwt.issuer $url) -}}
{{- end -}}
{{- end -}}
{{- if and $routed (not $v.trustedProxies) (not (hasKey ($v.gateway.env | default dict) "TRUST_PROXY")) (not (hasKey ($v.config | default dict) "TRUST_PROXY")) -}}
{{- $msgs = append $msgs "iam: trustedProxies is required with an Ingress or HTTPRoute: the CIDRs your ingress controller or Gateway reaches the gateway from (e.g. the pod network, [10.0.0.0/8]), as Hydra's allow_termination_from. Without it the gateway takes every request for http:// from the proxy's address: the provider advertises http:// endpoints, its cookies lose Secure, and every client shares one rate-limit budget. (gateway.env.TRUST_PROXY=true trusts any sender instead.)" -}}
{{- end -}}
{{- range $p := $v.trustedProxies -}}
{{- if not (regexMatch "^([0-9]{1,3}(\\.[0-9]{1,3}){3}(/[0-9]{1,2})?|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*(/[0-9]{1,3})?|loopback|linklocal|uniquelocal)$" (toString $p)) -}}
{{- $msgs = append $msgs (printf "iam: trustedProxies: %q is not an address or CIDR (e.g. 10.0.0.0/8, fd00::/8; or loopback, linklocal, uniquelocal)." (toString $p)) -}}
{{- end -}}
{{- end -}}
{{- $maxPods := int (include "iam.gatewayMaxReplicas" .) -}}
{{- $redis := or $v.redis.url $v.redis.existingSecret (hasKey $gatewayEnv "REDIS_URL_FILE") -}}
{{- if and $v.gateway.enabled (gt $maxPods 1) (not $redis) (not $v.redis.acceptPerPodLimits) -}}
{{- $msgs = append $msgs (printf "iam: the gateway may run %d pods and has no Redis: set redis.url or redis.existingSecret, so every pod shares the rate limits and refuses a DPoP proof any pod has seen; or set redis.acceptPerPodLimits=true to accept budgets and DPoP replay protection per pod (a proof replayed to another pod passes), or run one gateway pod." $maxPods) -}}
{{- end -}}
{{- toJson $msgs -}}
{{- end -}}
