# The two commands that matter: `make run` and `make test`. Everything installs itself.
SHELL := /bin/bash
NPM   ?= npm
BIN   := node_modules/.bin
STAMP := node_modules/.install-stamp

# Every target runs on Node 22.12 or newer: the host's, or, where the host's is older, the Node 24
# LTS pinned in tools/node (installed once from the npm registry, integrity-checked by npm ci; see
# README.md, "Node versions"). Its directory goes first on PATH, so npm and every tool use it too.
NODE_BIN_DIR := $(shell tools/node/ensure.sh || echo ensure-failed)
ifeq ($(NODE_BIN_DIR),ensure-failed)
$(error no usable Node: see the message above)
endif
ifneq ($(NODE_BIN_DIR),)
export PATH := $(NODE_BIN_DIR):$(PATH)
endif

.DEFAULT_GOAL := help
.PHONY: help install build typecheck run migrate test lint proto proto-check unicode bench figures node-version faults soak clean webhooks-docs webhooks-docs-check

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# npm ci, unless it refuses a lockfile that lacks other platforms' optional binaries (a registry
# mirror that serves only some of them); then npm install installs the same locked versions. That
# expected refusal is one line, not npm's wall of errors; any other failure shows npm's output.
$(STAMP): package.json package-lock.json
	@out=$$($(NPM) ci --no-audit --no-fund 2>&1); rc=$$?; \
	if [ $$rc -eq 0 ]; then echo "$$out" | grep -v 'Unknown user config'; \
	elif echo "$$out" | grep -q 'can only install packages when your package.json and package-lock.json'; then \
	  echo "npm ci: this registry lacks some platforms' optional packages the lockfile lists; installing the same locked versions with npm install"; \
	  $(NPM) install --no-audit --no-fund --loglevel=error 2>&1 | grep -v 'Unknown user config'; [ $${PIPESTATUS[0]} -eq 0 ] || exit 1; \
	else echo "$$out"; exit $$rc; fi
	@touch $@

install: $(STAMP) ## Install dependencies (npm ci) when package-lock.json changed

# The console is type-checked and bundled again only when one of its inputs changed (its sources,
# page, configs, or the installed packages): a second `make run` skips the 2–3 s Vite build.
CONSOLE_STAMP := console/dist/.build-stamp
CONSOLE_INPUTS := $(shell find console -path console/dist -prune -o -path console/node_modules -prune \
  -o -path console/test -prune -o -path console/test-output -prune -o -path console/docs -prune -o -type f -print) $(shell find packages/hosted-pages/src packages/hosted-pages/styles.css -type f)
$(CONSOLE_STAMP): $(STAMP) $(CONSOLE_INPUTS)
	$(BIN)/tsc -p console/tsconfig.json
	cd console && ../$(BIN)/vite build --logLevel warn
	@touch $@

build: $(STAMP) $(CONSOLE_STAMP) ## Compile every package (tsc -b) and the console (type-checked by tsc, bundled by Vite into console/dist)
	$(BIN)/tsc -b


typecheck: build ## Type-check everything, tests included
	$(BIN)/tsc -p tsconfig.test.json
	$(BIN)/tsc -p console/test/tsconfig.json

# The all-in-one process's V8 heap budget (MiB), as a container's memory limit gives one in
# production: without it V8 sizes the heap from the machine's memory and grows it under load
# long before collecting (deploy/README.md). bench/src/system.ts starts it the same way.
ALL_IN_ONE_HEAP_MIB ?= 256
# Its young generation's semi-space (MiB): V8's default here grows it to ~90 MiB of RSS the
# process never gives back at rest (deploy/README.md, issue #43).
ALL_IN_ONE_SEMI_SPACE_MIB ?= 8

run: build ## Start the whole system on an embedded PostgreSQL (gateway on PORT, default 8080)
	node --max-old-space-size=$(ALL_IN_ONE_HEAP_MIB) --max-semi-space-size=$(ALL_IN_ONE_SEMI_SPACE_MIB) deploy/all-in-one/dist/main.js

migrate: $(STAMP) ## Apply each service's migrations: every <SERVICE>_DATABASE_URL set (a role that may change the schema); <SERVICE>_DATABASE_RUNTIME_ROLE gets DML only
	$(BIN)/tsc -b
	@n=0; for s in directory identity notification commerce audit; do \
	  v=$${s^^}_DATABASE_URL; [ -n "$${!v}" ] || continue; \
	  node services/$$s/dist/main.js migrate || exit 1; n=$$((n+1)); \
	done; [ $$n -gt 0 ] || { echo "make migrate: set the <SERVICE>_DATABASE_URL of the services to migrate (make run migrates by itself)"; exit 2; }

test: typecheck ## Unit and integration tests (real PostgreSQL/NATS when reachable, else embedded/in-process)
	NODE_OPTIONS=--experimental-vm-modules $(BIN)/jest

LINT_STAMP := tools/lint/node_modules/.install-stamp
$(LINT_STAMP): tools/lint/package.json tools/lint/package-lock.json
	@cd tools/lint && $(NPM) ci --no-audit --no-fund 2>&1 | grep -v 'Unknown user config'; test -x node_modules/.bin/eslint
	@touch $@

lint: build $(LINT_STAMP) ## ESLint, type-aware (typescript-eslint; its own install in tools/lint), on a built tree
	tools/lint/node_modules/.bin/eslint --max-warnings 0 .

proto: $(STAMP) ## Lint the protos and regenerate packages/contracts/src/gen (code and descriptor set)
	cd protos && ../$(BIN)/buf lint && ../$(BIN)/buf generate
	cd protos && ../$(BIN)/buf build --exclude-source-info -o -#format=binpb | node write-descriptor-set.mjs ../packages/contracts/src/gen/descriptor-set.ts

unicode: ## Regenerate packages/platform/src/unicode/uts39-data.generated.ts from the Unicode data in tools/unicode
	node tools/unicode/generate.mjs

proto-check: proto ## Fail when the generated code differs from what is committed
	@test -z "$$(git status --porcelain -- packages/contracts/src/gen)" || \
	  { git status --short -- packages/contracts/src/gen; echo "generated code is stale: run 'make proto' and commit"; exit 1; }

API_GENERATED := console/src/api/schema.d.ts console/src/api/limits.generated.ts

api: build ## Regenerate console/src/api/schema.d.ts and limits.generated.ts from the gateway's Full-profile OpenAPI document and edge GraphQL schema
	node console/scripts/gen-api.mjs

api-check: api ## Fail when the console's generated API types or limits differ from what is committed
	@test -z "$$(git status --porcelain -- $(API_GENERATED))" || \
	  { git status --short -- $(API_GENERATED); echo "the console's generated API files are stale: run 'make api' and commit"; exit 1; }

webhooks-docs: build ## Regenerate the README's webhook event catalog from packages/contracts/src/webhooks (the one source)
	node tools/webhooks/docs.mjs

webhooks-docs-check: build ## Fail when the README's webhook event catalog differs from the catalog
	node tools/webhooks/docs.mjs --check

figures: build ## The README's start-up and memory figures from a fresh clone of HEAD (not in CI; writes README.md)
	node bench/dist/newcomer.js

node-version: ## The Node every target runs on
	@node --version

bench: build ## Benchmarks (not in CI); results go to bench/README.md
	node bench/dist/run.js

faults: build ## Fault suite (issue #14; in CI, not in make test): own processes, PostgreSQL and NATS per test, ~6 min
	NODE_OPTIONS=--experimental-vm-modules $(BIN)/jest -c deploy/all-in-one/test/faults/jest.config.js

soak: build ## Soak: 500 concurrent clients for 60 s (not in CI); its table goes to bench/README.md
	node bench/dist/soak.js

clean: ## Remove build output (keeps .data)
	$(BIN)/tsc -b --clean
	rm -rf console/dist
