-- The user search's planner estimate against the real matches, over terms of 3-6 characters cut
-- from the rows (issue #25 item 6: may a term estimated at ten times the count bound go uncounted?).
-- psql -h 127.0.0.1 -p 25432 -U postgres psearch_bench_directory -f bench/sql/search-estimates.sql
-- The expression is the directory's USER_SEARCH (services/directory/src/infra/user-search.ts).
CREATE OR REPLACE FUNCTION pg_temp.est(t text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE r json; BEGIN
  EXECUTE format($q$EXPLAIN (FORMAT JSON) SELECT 1 FROM users u WHERE u.deleted_at IS NULL AND translate(lower(u.first_name || E'\x1f' || u.last_name || E'\x1f' || u.email), '.@-_+'' ', 'DAHUPQS') LIKE translate(lower(%L), '.@-_+'' ', 'DAHUPQS')$q$, '%' || t || '%') INTO r;
  RETURN (r->0->'Plan'->>'Plan Rows')::float8; END $$;
CREATE OR REPLACE FUNCTION pg_temp.real(t text) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM users u WHERE u.deleted_at IS NULL AND translate(lower(u.first_name || E'\x1f' || u.last_name || E'\x1f' || u.email), '.@-_+'' ', 'DAHUPQS') LIKE translate(lower('%' || t || '%'), '.@-_+'' ', 'DAHUPQS') $$;
SELECT setseed(0.42);
WITH terms AS (
  SELECT DISTINCT substr(src, 1 + floor(random() * greatest(length(src) - len, 1))::int, len) AS t
  FROM (SELECT (ARRAY[first_name, last_name, email])[1 + floor(random()*3)::int] AS src, 3 + floor(random()*4)::int AS len FROM users TABLESAMPLE SYSTEM (0.05) LIMIT 200) s
), m AS (SELECT t, pg_temp.est(t) AS est, pg_temp.real(t) AS real FROM terms WHERE length(t) >= 3)
SELECT count(*) AS terms,
  count(*) FILTER (WHERE est >= 10000) AS est_ge_10k,
  count(*) FILTER (WHERE est >= 10000 AND real <= 1001) AS would_misreport,
  min(real) FILTER (WHERE est >= 10000) AS min_real_when_est_ge_10k,
  max(est / greatest(real, 1)) AS max_over, percentile_cont(0.5) WITHIN GROUP (ORDER BY est / greatest(real,1)) AS median_over,
  count(*) FILTER (WHERE est >= 5000 AND real <= 1001) AS misreport_at_5k
FROM m;
