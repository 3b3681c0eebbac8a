"""Authlib (Debian's python3-authlib) as the relying party of the provider: rp-authlib.e2e.test.ts
runs it with /usr/bin/python3 and checks what it prints.

It serves its redirect URI itself (on another origin than the provider), prints the authorization
URL as a JSON line ({"authorize": url}) for the test to walk in a browser, and once the browser is
back, prints one JSON line with what it got: code + PKCE S256 with client_secret_basic, the ID
token validated against the provider's JWKS (signature, iss, aud, exp, nonce, at_hash), userinfo,
refresh, introspection and revocation, and client_credentials with client_secret_basic and
client_secret_post. Any failure exits non-zero with the reason on stderr.

Arguments (JSON on argv[1]): issuer, client_id, client_secret, redirect_uri (http://HOST:PORT/callback,
where it listens), service_id, service_secret.
"""
import base64
import hashlib
import json
import secrets
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, jwt
from authlib.oidc.core import CodeIDToken

args = json.loads(sys.argv[1])
issuer = args["issuer"]
redirect_uri = args["redirect_uri"]
out = {}


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


meta = requests.get(f"{issuer}/.well-known/openid-configuration", timeout=10).json()
if meta.get("issuer") != issuer:
    fail(f"discovery names issuer {meta.get('issuer')}")
out["id_token_signing_alg_values_supported"] = meta.get("id_token_signing_alg_values_supported")

# The redirect URI: a one-shot HTTP server on its own origin.
callback = {}
done = threading.Event()


class Callback(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        if urlparse(self.path).path != urlparse(redirect_uri).path:
            self.send_response(404)
            self.end_headers()
            return
        callback["url"] = f"{redirect_uri.split('?')[0]}?{urlparse(self.path).query}"
        # Taken before the answer: the browser may close the connection as soon as it has the page.
        done.set()
        body = b'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>The app</title></head><body><main><h1>Back at the app</h1></main></body></html>'
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_):
        pass


where = urlparse(redirect_uri)
# Threaded: a connection the browser opens ahead and leaves idle must not hold the callback up.
server = ThreadingHTTPServer((where.hostname, where.port), Callback)
threading.Thread(target=server.serve_forever, daemon=True).start()

client = OAuth2Session(
    args["client_id"],
    args["client_secret"],
    scope="openid email profile offline_access",
    redirect_uri=redirect_uri,
    code_challenge_method="S256",
    token_endpoint_auth_method="client_secret_basic",
)
verifier = secrets.token_urlsafe(48)
nonce = secrets.token_urlsafe(16)
url, state = client.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce, prompt="consent")
print(json.dumps({"authorize": url}), flush=True)
if not done.wait(60):
    fail("the browser did not come back to the redirect URI")
server.shutdown()

back = callback["url"]
out["callback_iss"] = parse_qs(urlparse(back).query).get("iss", [None])[0]
token = client.fetch_token(meta["token_endpoint"], authorization_response=back, code_verifier=verifier, state=state)

# The ID token, against the JWKS the discovery names.
keys = JsonWebKey.import_key_set(requests.get(meta["jwks_uri"], timeout=10).json())
header = json.loads(base64.urlsafe_b64decode(token["id_token"].split(".")[0] + "=="))
out["id_token_alg"] = header.get("alg")
out["id_token_kid_in_jwks"] = any(k.get("kid") == header.get("kid") for k in requests.get(meta["jwks_uri"], timeout=10).json()["keys"])
claims = jwt.decode(
    token["id_token"],
    keys,
    claims_cls=CodeIDToken,
    claims_options={"iss": {"essential": True, "value": issuer}},
    claims_params={"nonce": nonce, "client_id": args["client_id"], "access_token": token["access_token"]},
)
claims.validate(leeway=5)
out["id_token"] = dict(claims)
if "at_hash" in claims:
    digest = hashlib.sha256(token["access_token"].encode()).digest()
    out["at_hash_ok"] = claims["at_hash"] == base64.urlsafe_b64encode(digest[:16]).rstrip(b"=").decode()

userinfo = client.get(meta["userinfo_endpoint"])
out["userinfo_status"] = userinfo.status_code
out["userinfo"] = userinfo.json()
# The access token as an app passes it on: the API takes it (before the grant's revocation below ends it).
out["api_me_status"] = requests.get(f"{issuer}/api/v1/me", headers={"authorization": f"Bearer {token['access_token']}"}, timeout=10).status_code

# Refresh (the provider rotates the refresh token).
first_refresh = token["refresh_token"]
refreshed = client.refresh_token(meta["token_endpoint"], refresh_token=first_refresh)
out["refreshed"] = {"new_access_token": refreshed["access_token"] != token["access_token"], "rotated": refreshed["refresh_token"] != first_refresh}

# Introspection (RFC 7662) and revocation (RFC 7009) of its refresh token.
active = client.introspect_token(meta["introspection_endpoint"], token=refreshed["refresh_token"], token_type_hint="refresh_token")
out["introspection"] = active.json()
revoked = client.revoke_token(meta["revocation_endpoint"], token=refreshed["refresh_token"], token_type_hint="refresh_token")
out["revocation_status"] = revoked.status_code
after = client.introspect_token(meta["introspection_endpoint"], token=refreshed["refresh_token"], token_type_hint="refresh_token")
out["introspection_after_revocation"] = after.json()
try:
    client.refresh_token(meta["token_endpoint"], refresh_token=refreshed["refresh_token"])
    out["refresh_after_revocation"] = "accepted"
except Exception as e:  # authlib raises OAuthError with the error code
    out["refresh_after_revocation"] = getattr(e, "error", str(e))

# client_credentials, with each client authentication method the discovery lists.
out["client_credentials"] = {}
for method in ("client_secret_basic", "client_secret_post"):
    svc = OAuth2Session(args["service_id"], args["service_secret"], token_endpoint_auth_method=method)
    t = svc.fetch_token(meta["token_endpoint"], grant_type="client_credentials")
    out["client_credentials"][method] = t["access_token"]

print(json.dumps(out), flush=True)
