# The two commands that matter: `make run` and `make test`. Everything installs itself.
SHELL := /bin/bash
NPM   ?= npm
BIN   := node_modules/.bin
STAMP := node_modules/.install-stamp

.DEFAULT_GOAL := help
.PHONY: help install build typecheck run test lint proto proto-check bench clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# npm ci, unless it refuses a lockfile that lacks other platforms' optional binaries (a registry
# mirror that serves only some of them); then npm install installs the same locked versions.
$(STAMP): package.json package-lock.json
	@out=$$($(NPM) ci --no-audit --no-fund 2>&1); rc=$$?; echo "$$out" | grep -v 'Unknown user config'; \
	if [ $$rc -ne 0 ]; then \
	  echo "$$out" | grep -q 'can only install packages when your package.json and package-lock.json' || exit $$rc; \
	  echo "npm ci refused the lockfile (optional platform packages missing from this registry); using npm install"; \
	  $(NPM) install --no-audit --no-fund || exit 1; \
	fi
	@touch $@

install: $(STAMP) ## Install dependencies (npm ci) when package-lock.json changed

build: $(STAMP) ## Compile every package (tsc -b) and the console (type-checked by tsc, bundled by Vite into console/dist)
	$(BIN)/tsc -b
	$(BIN)/tsc -p console/tsconfig.json
	cd console && ../$(BIN)/vite build --logLevel warn

typecheck: build ## Type-check everything, tests included
	$(BIN)/tsc -p tsconfig.test.json
	$(BIN)/tsc -p console/test/tsconfig.json

run: build ## Start the whole system on an embedded PostgreSQL (gateway on PORT, default 8080)
	node deploy/all-in-one/dist/main.js

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

proto-check: proto ## Fail when the generated code differs from what is committed
	@test -z "$$(git status --porcelain -- packages/contracts/src/gen)" || \
	  { git status --short -- packages/contracts/src/gen; echo "generated code is stale: run 'make proto' and commit"; exit 1; }

bench: build ## Benchmarks (not in CI); results go to bench/README.md
	node bench/dist/run.js

clean: ## Remove build output (keeps .data)
	$(BIN)/tsc -b --clean
	rm -rf console/dist
