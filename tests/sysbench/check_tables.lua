#!/usr/bin/env sysbench
-- SPDX-License-Identifier: MIT
-- check_tables.lua - verifies sbtest tables through the driver under test (query_row, fetch_row,
-- NULLs), for tests/sysbench/run-workloads.sh. Commands:
--   verify  every sbtest<i>, i=1..--tables, has exactly --table-size rows with ids 1..N
--   nonempty the tables hold rows, each with ids 1..count without gaps (bulk_insert)
--   count   prints "ROWS <n>": the rows of sbtest1..sbtest<tables> together
--   absent  no sbtest<i> table and no sbtest<i>_seq sequence is left, i=1..--tables
--   values  NULLs, strings, numbers and multi-row results come back right
--   reconnect  a killed attachment gives a clean error and con:reconnect() recovers
-- Prints "CHECK OK" as its last line on success; raises an error otherwise.

sysbench.cmdline.options = {
   tables = {"Number of tables", 1},
   table_size = {"Rows per table", 0},
}

local function connect()
   local drv = sysbench.sql.driver()
   return drv, drv:connect()
end

local function stats(con, i)
   local n, lo, hi, d = con:query_row(string.format(
      "SELECT COUNT(*), MIN(id), MAX(id), COUNT(DISTINCT id) FROM sbtest%d", i))
   return tonumber(n), tonumber(lo), tonumber(hi), tonumber(d)
end

local function verify()
   local _, con = connect()
   for i = 1, sysbench.opt.tables do
      local n, lo, hi, d = stats(con, i)
      local want = sysbench.opt.table_size
      print(string.format("sbtest%d: rows=%s min=%s max=%s distinct=%s", i, n, lo, hi, d))
      assert(n == want, "sbtest" .. i .. ": expected " .. want .. " rows")
      if want > 0 then
         assert(lo == 1 and hi == want and d == want, "sbtest" .. i .. ": ids are not 1..N")
      end
   end
   print("CHECK OK")
end

local function nonempty()
   local _, con = connect()
   local total = 0
   for i = 1, sysbench.opt.tables do
      local n, lo, hi, d = stats(con, i)
      print(string.format("sbtest%d: rows=%s min=%s max=%s distinct=%s", i, n, lo, hi, d))
      -- a bulk_insert thread that got no event leaves its table empty
      assert(n == 0 or (lo == 1 and hi == n and d == n), "sbtest" .. i .. ": ids are not 1..N")
      total = total + n
   end
   assert(total > 0, "all tables are empty")
   print("CHECK OK")
end

local function count()
   local _, con = connect()
   local total = 0
   for i = 1, sysbench.opt.tables do
      total = total + tonumber(con:query_row("SELECT COUNT(*) FROM sbtest" .. i))
   end
   print("ROWS " .. total)
   print("CHECK OK")
end

local function absent()
   local _, con = connect()
   for i = 1, sysbench.opt.tables do
      local n = con:query_row("SELECT COUNT(*) FROM RDB$RELATIONS WHERE RDB$RELATION_NAME " ..
                              "= 'SBTEST" .. i .. "'")
      local s = con:query_row("SELECT COUNT(*) FROM RDB$GENERATORS WHERE " ..
                              "RDB$GENERATOR_NAME = 'SBTEST" .. i .. "_SEQ'")
      print(string.format("sbtest%d: table left: %s, sequence left: %s", i, n, s))
      assert(tonumber(n) == 0 and tonumber(s) == 0, "cleanup left sbtest" .. i .. " behind")
   end
   print("CHECK OK")
end

local function values()
   local _, con = connect()
   local a, b, c, d = con:query_row(
      "SELECT CAST(NULL AS INTEGER), 'it''s', CAST(-12.50 AS NUMERIC(9,2)), 7 FROM RDB$DATABASE")
   assert(a == nil, "NULL came back as " .. tostring(a))
   assert(b == "it's", "string came back as " .. tostring(b))
   assert(c == "-12.50", "numeric came back as " .. tostring(c))
   assert(d == "7", "integer came back as " .. tostring(d))
   local rs = con:query("SELECT RDB$RELATION_ID FROM RDB$RELATIONS WHERE RDB$RELATION_ID < 3 " ..
                        "ORDER BY 1")
   assert(rs.nrows == 3 and rs.nfields == 1, "nrows/nfields " .. rs.nrows .. "/" .. rs.nfields)
   for want = 0, 2 do
      local row = rs:fetch_row()
      assert(row and row[1] == tostring(want), "row " .. want)
   end
   assert(rs:fetch_row() == nil, "more rows than nrows")
   assert(con:query_row("SELECT 1 FROM RDB$DATABASE WHERE 1 = 0") == nil, "empty result")
   -- transactions: rolled back work disappears, committed work stays
   con:query("RECREATE TABLE fbw_check (id INTEGER)")
   con:query("BEGIN")
   con:query("INSERT INTO fbw_check VALUES (1)")
   con:query("ROLLBACK")
   con:query("BEGIN")
   con:query("INSERT INTO fbw_check VALUES (2),(3)")
   con:query("COMMIT")
   con:query("INSERT INTO fbw_check VALUES (4)")
   local n, s = con:query_row("SELECT COUNT(*), SUM(id) FROM fbw_check")
   assert(n == "3" and s == "9", "transactions: count " .. tostring(n) .. " sum " .. tostring(s))
   -- prepared statement with parameters, NULL parameter
   local st = con:prepare("SELECT COUNT(*) FROM fbw_check WHERE id > ? OR ? IS NULL")
   local p1 = st:bind_create(sysbench.sql.type.INT)
   local p2 = st:bind_create(sysbench.sql.type.VARCHAR, 10)
   st:bind_param(p1, p2)
   p1:set(2)
   p2:set("x")
   local r = st:execute()
   assert(r.nrows == 1, "prepared select nrows")
   assert(r:fetch_row()[1] == "2", "prepared select value")
   st:close()
   con:query("DROP TABLE IF EXISTS fbw_check")
   con:query("DROP TABLE IF EXISTS fbw_check")
   print("CHECK OK")
end

-- Kill our own attachment from a second connection; the next statement must fail cleanly and
-- the connection must work again: after con:reconnect(), or at once when the driver was told
-- to treat lost connections as ignorable (--<driver>-ignore-errors=...,network), in which case
-- the failing statement raises a restart-event error table instead of a fatal error string.
local function reconnect()
   local drv, con = connect()
   local killer = drv:connect()
   local st = con:prepare("SELECT COUNT(*) FROM RDB$DATABASE WHERE 1 = ?")
   local p = st:bind_create(sysbench.sql.type.INT)
   st:bind_param(p)
   p:set(1)
   assert(st:execute():fetch_row()[1] == "1", "prepared statement before the kill")
   local id = con:query_row("SELECT CURRENT_CONNECTION FROM RDB$DATABASE")
   killer:query("DELETE FROM MON$ATTACHMENTS WHERE MON$ATTACHMENT_ID = " .. id)
   local ok, err = pcall(con.query_row, con, "SELECT 1 FROM RDB$DATABASE")
   assert(not ok, "a query on a killed attachment succeeded")
   if type(err) == "table" then
      print("lost connection: restart-event error, errno " .. tostring(err.sql_errno) ..
            ", driver reconnected by itself")
   else
      print("lost connection: " .. tostring(err))
      con:reconnect()
   end
   assert(con:query_row("SELECT 1 FROM RDB$DATABASE") == "1", "query after reconnect")
   assert(st:execute():fetch_row()[1] == "1", "prepared statement after reconnect")
   local id2 = con:query_row("SELECT CURRENT_CONNECTION FROM RDB$DATABASE")
   assert(id2 ~= id, "still the old attachment")
   st:close()
   killer:disconnect()
   con:disconnect()
   print("CHECK OK")
end

sysbench.cmdline.commands = {
   reconnect = {reconnect},
   verify = {verify},
   count = {count},
   nonempty = {nonempty},
   absent = {absent},
   values = {values},
}
