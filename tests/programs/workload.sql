-- A PostgreSQL workload for tests/test_postgres.sh: a backend's allocations (sorts spilling past
-- work_mem, hash joins and aggregates, text, arrays, JSON, a recursive query), each step printing a
-- digest that must be the same under glibc's malloc and under the preload.
\set ON_ERROR_STOP on
SET work_mem = '4MB';
SET max_parallel_workers_per_gather = 0; -- no parallel plan: the same rows in the same order every run
CREATE TEMP TABLE t AS
  SELECT g AS id, md5(g::text) AS h, repeat(chr(65 + g % 26), g % 200) AS pad, (g * 7919) % 10007 AS k
  FROM generate_series(1, 200000) g;
CREATE INDEX ON t (h);
CREATE INDEX ON t (k, id);
ANALYZE t;
-- a sort larger than work_mem, then an index scan
SELECT md5(string_agg(h, ',' ORDER BY pad DESC, h)) AS sorted FROM t;
SELECT count(*), sum(length(pad)) FROM t WHERE h BETWEEN '1' AND '3';
-- a hash join and a hash aggregate
SELECT md5(string_agg(x::text, ',' ORDER BY x)) AS joined
  FROM (SELECT a.k, count(*) AS x FROM t a JOIN t b ON a.k = b.k AND a.id <> b.id GROUP BY a.k) s;
-- text: regular expressions, split and rebuilt strings
SELECT md5(string_agg(regexp_replace(h, '([0-9])([a-f])', '\2\1', 'g'), '' ORDER BY id)) AS regexed FROM t WHERE id % 3 = 0;
SELECT md5(array_to_string(array_agg(w ORDER BY w), ' ')) AS words
  FROM (SELECT DISTINCT unnest(string_to_array(translate(h, '0123456789', '          '), ' ')) AS w FROM t) s WHERE w <> '';
-- arrays and JSON built up and taken apart
SELECT md5(jsonb_agg(jsonb_build_object('id', id, 'h', h, 'a', ARRAY[k, id % 97]) ORDER BY id)::text) AS json
  FROM t WHERE id % 5 = 0;
SELECT sum((j->>'id')::int), count(*)
  FROM (SELECT jsonb_array_elements(jsonb_agg(to_jsonb(t) - 'pad')) AS j FROM t WHERE k < 2000) s;
-- a recursive query and window functions
WITH RECURSIVE c(n, v) AS (SELECT 1, 1::numeric UNION ALL SELECT n + 1, v * 3 + n FROM c WHERE n < 2000)
  SELECT md5(string_agg(v::text, '' ORDER BY n)) AS recursive FROM c;
SELECT md5(string_agg(r::text || ':' || s::text, ',' ORDER BY id)) AS windows
  FROM (SELECT id, rank() OVER (PARTITION BY k % 50 ORDER BY h) AS r,
               sum(length(pad)) OVER (ORDER BY id ROWS BETWEEN 100 PRECEDING AND CURRENT ROW) AS s FROM t) w;
-- rows deleted and the table rewritten
DELETE FROM t WHERE id % 3 = 1;
VACUUM FULL t;
SELECT count(*), md5(string_agg(h, '' ORDER BY id)) AS rewritten FROM t;
