#!/bin/sh
# PostgreSQL's first start (docker-entrypoint-initdb.d): per service a database owned by its
# migration role (iam_<service>_owner: schema changes, run by the `migrate` one-shot) and a runtime
# role (iam_<service>: connect only; `migrate` grants it DML on the tables). No service uses the
# superuser. Runs once, on an empty data volume (`docker-compose down -v` starts over).
set -eu
for s in directory identity notification commerce audit; do
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
    -v owner="iam_${s}_owner" -v runtime="iam_${s}" -v db="iam_${s}" -v pw="$IAM_DB_PASSWORD" <<'SQL'
CREATE ROLE :"owner" LOGIN PASSWORD :'pw';
CREATE ROLE :"runtime" LOGIN PASSWORD :'pw';
CREATE DATABASE :"db" OWNER :"owner";
REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
GRANT CONNECT ON DATABASE :"db" TO :"runtime";
SQL
done
