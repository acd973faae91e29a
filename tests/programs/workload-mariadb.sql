-- A MariaDB workload for tests/test_mariadb.sh: a connection thread's allocations (sorts past the
-- sort buffer, hash and group-by temporary tables, text, JSON, a recursive query, window
-- functions, a table rebuilt), each step printing a digest that must be the same under glibc's
-- malloc and under the preload.
SET SESSION group_concat_max_len = 1 << 30, sort_buffer_size = 256 * 1024, max_heap_table_size = 1 << 20;
CREATE DATABASE IF NOT EXISTS w;
USE w;
DROP TABLE IF EXISTS t;
CREATE TABLE t (id INT PRIMARY KEY, h CHAR(32), pad VARCHAR(200), k INT, KEY (h), KEY (k, id)) ENGINE = InnoDB;
INSERT INTO t SELECT seq, md5(seq), repeat(char(65 + seq % 26), seq % 200), (seq * 7919) % 10007 FROM seq_1_to_100000;
-- a sort larger than the sort buffer, then an index range
SELECT md5(group_concat(h ORDER BY pad DESC, h SEPARATOR ',')) AS sorted FROM t;
SELECT count(*), sum(length(pad)) FROM t WHERE h BETWEEN '1' AND '3';
-- a self-join grouped through a temporary table larger than max_heap_table_size
SELECT md5(group_concat(x ORDER BY k, x)) AS joined
  FROM (SELECT a.k, count(*) AS x FROM t a JOIN t b ON a.k = b.k AND a.id <> b.id GROUP BY a.k) s;
-- text: regular expressions
SELECT md5(group_concat(regexp_replace(h, '([0-9])([a-f])', '\\2\\1') ORDER BY id SEPARATOR '')) AS regexed
  FROM t WHERE id % 3 = 0;
-- JSON built up and taken apart
SELECT md5(json_arrayagg(json_object('id', id, 'h', h, 'a', json_array(k, id % 97)))) AS json
  FROM (SELECT * FROM t WHERE id % 5 = 0 ORDER BY id) s;
SELECT sum(j.id), count(*) FROM json_table((SELECT json_arrayagg(json_object('id', id)) FROM t WHERE k < 2000),
  '$[*]' COLUMNS (id INT PATH '$.id')) j;
-- a recursive query and window functions
WITH RECURSIVE c(n, v) AS (SELECT 1, CAST(1 AS DECIMAL(65, 0)) UNION ALL SELECT n + 1, (v * 3 + n) % 1000000007 FROM c WHERE n < 2000)
  SELECT md5(group_concat(v ORDER BY n SEPARATOR '')) AS recursed FROM c;
SELECT md5(group_concat(concat(r, ':', s) ORDER BY id)) AS windows
  FROM (SELECT id, rank() OVER (PARTITION BY k % 50 ORDER BY h) AS r,
               sum(length(pad)) OVER (ORDER BY id ROWS BETWEEN 100 PRECEDING AND CURRENT ROW) AS s FROM t) w;
-- rows deleted and the table rebuilt
DELETE FROM t WHERE id % 3 = 1;
ALTER TABLE t FORCE;
SELECT count(*), md5(group_concat(h ORDER BY id SEPARATOR '')) AS rebuilt FROM t;
DROP DATABASE w;
