#!/bin/sh
# Builds the renderer (main.go) into $1 from Debian's Go packages, offline:
#   apt-get install golang-go golang-github-masterminds-sprig-dev golang-gopkg-yaml.v3-dev
# Every module is taken from /usr/share/gocode/src (replace directives); nothing is downloaded.
set -eu
out=${1:?usage: build.sh <output binary>}
src=/usr/share/gocode/src
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/main.go" "$work/"
{
  echo 'module iamrender'
  echo 'go 1.19'
  echo 'require ('
  echo '  github.com/Masterminds/sprig/v3 v3.0.0'
  echo '  gopkg.in/yaml.v3 v3.0.0'
  echo ')'
  for m in github.com/Masterminds/sprig/v3=github.com/Masterminds/sprig \
           github.com/Masterminds/goutils=github.com/Masterminds/goutils \
           github.com/Masterminds/semver/v3=github.com/Masterminds/semver \
           github.com/google/uuid=github.com/google/uuid \
           github.com/huandu/xstrings=github.com/huandu/xstrings \
           github.com/imdario/mergo=github.com/imdario/mergo \
           github.com/mitchellh/copystructure=github.com/mitchellh/copystructure \
           github.com/mitchellh/reflectwalk=github.com/mitchellh/reflectwalk \
           github.com/shopspring/decimal=github.com/shopspring/decimal \
           github.com/spf13/cast=github.com/spf13/cast \
           github.com/stretchr/testify=github.com/stretchr/testify \
           golang.org/x/crypto=golang.org/x/crypto \
           golang.org/x/sys=golang.org/x/sys \
           golang.org/x/net=golang.org/x/net \
           golang.org/x/term=golang.org/x/term \
           golang.org/x/text=golang.org/x/text \
           gopkg.in/yaml.v3=gopkg.in/yaml.v3; do
    dir=$src/${m#*=}
    if [ ! -f "$dir/go.mod" ]; then   # an old package without go.mod: a copy with one
      mkdir -p "$work/mods/${m#*=}" && cp -r "$dir/." "$work/mods/${m#*=}/"
      echo "module ${m%%=*}" > "$work/mods/${m#*=}/go.mod"
      dir=$work/mods/${m#*=}
    fi
    echo "replace ${m%%=*} => $dir"
  done
} > "$work/go.mod"
cd "$work"
# Modules only the packages' own tests need (check.v1, testify's friends...) are not installed:
# each becomes an empty stub, as go reports them.
for _ in $(seq 1 30); do
  if err=$(GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GOCACHE="${GOCACHE:-$work/cache}" GOPATH="$work/gopath" \
           go build -o "$out" . 2>&1); then exit 0; fi
  missing=$(printf '%s\n' "$err" | sed -n 's/^[[:space:]]*\([^@[:space:]]*\)@[^:]*: module lookup disabled.*/\1/p' | head -n 1)
  [ -n "$missing" ] || { printf '%s\n' "$err" >&2; exit 1; }
  mkdir -p "$work/stubs/$missing" && echo "module $missing" > "$work/stubs/$missing/go.mod"
  echo "replace $missing => $work/stubs/$missing" >> go.mod
done
printf '%s\n' "$err" >&2; exit 1
