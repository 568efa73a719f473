#!/usr/bin/env sysbench
-- SPDX-License-Identifier: MIT
-- api_test.lua - sysbench's Lua SQL API against a Firebird driver of the plug-in, in one event:
--
--   fbwire-sysbench tests/sysbench/api_test.lua --db-driver=fbwire --fbwire-db=... \
--       [--db-ps-mode=disable] --threads=1 --events=1 --time=0 run
--
-- Covers con:query / query_row, rs:fetch_row / free, nrows / nfields and the counter sysbench
-- books for each statement (read from the connection's result struct after every call), NULLs,
-- CHAR padding, prepare + bind of every bind type (the Lua bind_create types and, through
-- db_bind_param directly, the C types the legacy API and other callers use), values with quote
-- characters (inlined under --db-ps-mode=disable), text bound to BLOB parameters, transactions,
-- error paths (fatal errors as strings, ignorable ones as restart-event tables, the connection
-- usable afterwards), the bulk insert layer (every flushed row accounted, a failing multi-row
-- INSERT leaves nothing), con:reconnect() and a killed attachment. It prints "EXPECT read=.. write=.. other=..
-- errors=.. reconnects=.." (what sysbench's report must show) and "API OK" at the end;
-- tests/sysbench/run-workloads.sh compares the two. Any failed check raises an error.

local ffi = require("ffi")
ffi.cdef [[ typedef struct { unsigned int year, month, day, hour, minute, second; } fbw_api_time; ]]

local T = sysbench.sql.type
local CNT = { OTHER = 0, READ = 1, WRITE = 2, ERROR = 4, RECONNECT = 5 }
local CNT_NAME = { [0] = "OTHER", "READ", "WRITE", "TRX", "ERROR", "RECONNECT" }
local booked = { [0] = 0, 0, 0, 0, 0, 0 } -- what sysbench must have counted, by counter
local driver_name
local checks = 0

local function fail(what, got, want)
   error(string.format("FAIL %s: got %s, want %s", what, tostring(got), tostring(want)), 2)
end

local function eq(got, want, what)
   checks = checks + 1
   if got ~= want then
      fail(what, got, want)
   end
end

-- The connection's result struct (db_conn_t.rs, offset 0x28 in sysbench 1.0.20): the driver
-- sets counter and nrows there on every query/execute, also when Lua gets no result object.
local function rs_of(con)
   return ffi.cast("sql_result *", ffi.cast("char *", con) + 0x28)
end

-- After a query/execute: the counter the driver chose, and nrows/nfields when given.
local function booked_as(con, counter, nrows, nfields, what)
   local rs = rs_of(con)
   eq(CNT_NAME[tonumber(rs.counter)], CNT_NAME[counter], what .. ": counter")
   booked[counter] = booked[counter] + 1
   if nrows then eq(tonumber(rs.nrows), nrows, what .. ": nrows") end
   if nfields then eq(tonumber(rs.nfields), nfields, what .. ": nfields") end
end

local function q(con, sql, counter, nrows, nfields)
   local rs = con:query(sql)
   booked_as(con, counter, nrows, nfields, sql)
   return rs
end

local function exec(con, stmt, counter, nrows, nfields, what)
   local rs = stmt:execute()
   booked_as(con, counter, nrows, nfields, what)
   return rs
end

-- A statement that must fail: returns the error (a string when fatal, a table for restarts).
local function q_fail(con, sql, errno, ignorable)
   local ok, err = pcall(con.query, con, sql)
   eq(ok, false, sql .. ": failed")
   booked_as(con, CNT.ERROR, nil, nil, sql)
   if ignorable then
      eq(type(err), "table", sql .. ": restart-event error")
      eq(err.errcode, sysbench.error.RESTART_EVENT, sql .. ": errcode")
      eq(err.sql_errno, errno, sql .. ": sql_errno")
   else
      eq(type(err), "string", sql .. ": fatal error")
      eq(err:find("errno = " .. errno, 1, true) ~= nil, true, sql .. ": errno in '" .. err .. "'")
   end
   return err
end

local function row_of(con, sql, nfields)
   local rs = q(con, sql, CNT.READ, 1, nfields)
   local row = rs:fetch_row()
   return row
end

local function count_rows(con, tbl, where)
   return row_of(con, "SELECT COUNT(*) FROM " .. tbl .. (where and (" WHERE " .. where) or ""), 1)[1]
end

-- ---------------------------------------------------------------- sections

local function results(con)
   q(con, "RECREATE TABLE fbw_api (id INTEGER NOT NULL PRIMARY KEY, v VARCHAR(40), " ..
          "n NUMERIC(9,2), c CHAR(6))", CNT.OTHER, 0)
   q(con, "INSERT INTO fbw_api (id, v, n, c) VALUES (1, 'one', 1.5, 'a')", CNT.WRITE, 1)
   q(con, "INSERT INTO fbw_api (id, v, n, c) VALUES (2, 'two', -12.5, 'bb')", CNT.WRITE, 1)
   q(con, "INSERT INTO fbw_api (id, v, n, c) VALUES (3, NULL, NULL, NULL)", CNT.WRITE, 1)
   q(con, "UPDATE fbw_api SET v = v WHERE id > 100", CNT.OTHER, 0)
   q(con, "UPDATE fbw_api SET n = n WHERE id <= 3", CNT.WRITE, 3)

   local rs = q(con, "SELECT id, v, n, c FROM fbw_api ORDER BY id", CNT.READ, 3, 4)
   local r1, r2, r3 = rs:fetch_row(), rs:fetch_row(), rs:fetch_row()
   eq(rs:fetch_row(), nil, "fetch_row past nrows")
   eq(r1[1] .. "|" .. r1[2] .. "|" .. r1[3] .. "|" .. r1[4], "1|one|1.50|a     ", "row 1")
   eq(r2[3], "-12.50", "NUMERIC(9,2) text")
   eq(r2[4], "bb    ", "CHAR(6) keeps its blank padding")
   eq(r3[1], "3", "row 3 id")
   eq(r3[2] == nil and r3[3] == nil and r3[4] == nil, true, "NULL columns are nil")
   rs:free()

   -- an empty result is still a result set: READ with nrows 0
   rs = q(con, "SELECT id FROM fbw_api WHERE id < 0", CNT.READ, 0, 1)
   eq(con:query_row("SELECT id FROM fbw_api WHERE id < 0"), nil, "query_row of no rows")
   booked[CNT.READ] = booked[CNT.READ] + 1

   -- NULL versus the empty string, and query_row's unpacking with a NULL in the middle
   local a, b, c = con:query_row("SELECT 'x', CAST(NULL AS VARCHAR(5)), '' FROM RDB$DATABASE")
   booked_as(con, CNT.READ, 1, 3, "query_row with NULL")
   eq(a .. "|" .. tostring(b) .. "|[" .. c .. "]", "x|nil|[]", "NULL and empty string")

   -- a CHAR in a multi-byte charset keeps its length in characters, not 4 bytes per character
   a, b = con:query_row("SELECT CAST('ab' AS CHAR(5) CHARACTER SET UTF8), " ..
                        "CAST('\195\169' AS CHAR(3) CHARACTER SET UTF8) FROM RDB$DATABASE")
   booked_as(con, CNT.READ, 1, 2, "UTF8 CHAR")
   eq("[" .. a .. "]", "[ab   ]", "CHAR(5) UTF8")
   eq("[" .. b .. "]", "[\195\169  ]", "CHAR(3) UTF8 with a 2-byte character")

   -- many rows, fetched to the end
   rs = q(con, "SELECT r.RDB$RELATION_ID FROM RDB$RELATIONS r WHERE r.RDB$RELATION_ID < 20 " ..
               "ORDER BY 1", CNT.READ, 20, 1)
   local n = 0
   while true do
      local row = rs:fetch_row()
      if row == nil then break end
      eq(row[1], tostring(n), "relation id " .. n)
      n = n + 1
   end
   eq(n, 20, "rows fetched")
end

local function binds(con)
   q(con, "RECREATE TABLE fbw_types (id BIGINT NOT NULL PRIMARY KEY, ti SMALLINT, si SMALLINT, " ..
          "i INTEGER, bi BIGINT, f FLOAT, d DOUBLE PRECISION, t TIME, dt DATE, ts TIMESTAMP, " ..
          "ts2 TIMESTAMP, c CHAR(10), vc VARCHAR(60))", CNT.OTHER, 0)

   -- the Lua API: bind_create maps every integer type to BIGINT, FLOAT/DOUBLE to DOUBLE and
   -- CHAR/VARCHAR to VARCHAR; anything else is refused by sysbench itself
   local st = con:prepare("INSERT INTO fbw_types (id, i, bi, d, f, c, vc) VALUES (?, ?, ?, ?, ?, ?, ?)")
   local pid = st:bind_create(T.BIGINT)
   local pi = st:bind_create(T.INT)
   local pbi = st:bind_create(T.TINYINT)
   local pd = st:bind_create(T.DOUBLE)
   local pf = st:bind_create(T.FLOAT)
   local pc = st:bind_create(T.CHAR, 10)
   local pvc = st:bind_create(T.VARCHAR, 60)
   eq(pi.type, T.BIGINT, "bind_create(INT) type")
   eq(pf.type, T.DOUBLE, "bind_create(FLOAT) type")
   eq(pc.type, T.VARCHAR, "bind_create(CHAR) type")
   for _, bad in ipairs({ T.TIME, T.DATE, T.DATETIME, T.TIMESTAMP }) do
      eq(pcall(st.bind_create, st, bad), false, "bind_create(" .. bad .. ") refused by sysbench")
   end
   st:bind_param(pid, pi, pbi, pd, pf, pc, pvc)
   pid:set(1)
   pi:set(-2147483648)
   pbi.buffer[0] = 9223372036854775807LL  -- beyond a Lua number: set the int64 buffer itself
   -- sysbench 1.0.20's param:set() stores a double at buffer[1] (past its one-element buffer),
   -- so DOUBLE values are written into the buffer directly
   pd.buffer[0] = 0.1
   pf.buffer[0] = 2.5
   pc:set("char")
   pvc:set("it's a 'quoted' value; ? and -- stay text")
   exec(con, st, CNT.WRITE, 1, nil, "insert through Lua binds")
   -- the same statement again, with NULLs (set(nil) raises the null flag)
   pid:set(2)
   pi:set(nil)
   pbi:set(nil)
   pd:set(nil)
   pf:set(nil)
   pc:set(nil)
   pvc:set("")
   exec(con, st, CNT.WRITE, 1, nil, "insert with NULLs")
   st:close()

   local r = row_of(con, "SELECT i, bi, d, f, c, vc FROM fbw_types WHERE id = 1", 6)
   eq(r[1], "-2147483648", "INTEGER via BIGINT bind")
   eq(r[2], "9223372036854775807", "BIGINT max")
   eq(r[3], "0.1", "DOUBLE")
   eq(r[4], "2.5", "FLOAT")
   eq(r[5], "char      ", "CHAR(10) from a VARCHAR bind, padded")
   eq(r[6], "it's a 'quoted' value; ? and -- stay text", "VARCHAR with quotes and ?")
   eq(count_rows(con, "fbw_types", "id = 2 AND i IS NULL AND bi IS NULL AND d IS NULL AND " ..
                  "f IS NULL AND c IS NULL AND vc = ''"), "1", "NULL binds, empty string")

   -- db_bind_param with the C bind types (as the legacy API and C callers send them): native
   -- widths, date/time structs, CHAR without data_len and without is_null
   st = con:prepare("INSERT INTO fbw_types (id, ti, si, i, f, d, t, dt, ts, ts2, c) " ..
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
   local id = ffi.new("int64_t[1]", 3)
   local ti = ffi.new("int8_t[1]", -5)
   local si = ffi.new("int16_t[1]", 32767)
   local i32 = ffi.new("int32_t[1]", 123456789)
   local f = ffi.new("float[1]", 0.5)
   local d = ffi.new("double[1]", -1.25e-3)
   local tm = ffi.new("fbw_api_time", { 0, 0, 0, 12, 34, 56 })
   local date = ffi.new("fbw_api_time", { 2024, 2, 29, 0, 0, 0 })
   local dt = ffi.new("fbw_api_time", { 1999, 12, 31, 23, 59, 58 })
   local ts = ffi.new("fbw_api_time", { 2000, 1, 1, 0, 0, 1 })
   local ch = ffi.new("char[16]", "legacy")
   local nul = ffi.new("char[1]", 0)
   local never = ffi.new("char[1]", 0)
   local b = ffi.new("sql_bind[11]")
   local function set(k, ty, buf, len, is_null)
      b[k].type = ty
      b[k].buffer = buf
      b[k].data_len = nil
      b[k].max_len = len
      b[k].is_null = is_null
   end
   set(0, T.BIGINT, id, 8, never)
   set(1, T.TINYINT, ti, 1, nul)
   set(2, T.SMALLINT, si, 2, nul)
   set(3, T.INT, i32, 4, nul)
   set(4, T.FLOAT, f, 4, nul)
   set(5, T.DOUBLE, d, 8, nul)
   set(6, T.TIME, tm, ffi.sizeof(tm), nul)
   set(7, T.DATE, date, ffi.sizeof(date), nul)
   set(8, T.DATETIME, dt, ffi.sizeof(dt), nil)
   set(9, T.TIMESTAMP, ts, ffi.sizeof(ts), nil)
   set(10, T.CHAR, ch, 16, nil)
   eq(ffi.C.db_bind_param(st, b, 11), 0, "db_bind_param with C types")
   exec(con, st, CNT.WRITE, 1, nil, "insert through C binds")
   -- binding again replaces the binds (the legacy API rebinds when a string grows)
   id[0] = 4
   nul[0] = 1
   eq(ffi.C.db_bind_param(st, b, 11), 0, "db_bind_param again")
   exec(con, st, CNT.WRITE, 1, nil, "insert through C binds, null flags set")
   st:close()
   eq(count_rows(con, "fbw_types", "id = 3 AND ti = -5 AND si = 32767 AND i = 123456789 AND " ..
                  "f = 0.5 AND d = -1.25e-3 AND t = '12:34:56' AND dt = '2024-02-29' AND " ..
                  "ts = '1999-12-31 23:59:58' AND ts2 = '2000-01-01 00:00:01' AND " ..
                  "c = 'legacy'"), "1", "C bind types stored")
   -- columns bound with is_null set are NULL; the ones without a null flag are not
   eq(count_rows(con, "fbw_types", "id = 4 AND ti IS NULL AND t IS NULL AND dt IS NULL AND " ..
                  "ts IS NOT NULL AND c = 'legacy'"), "1", "null flags")
   if driver_name == "fbwire" then
      -- fbwire's text forms of the temporal and float types (value.h, canonical text)
      r = row_of(con, "SELECT ti, si, f, d, t, dt, ts FROM fbw_types WHERE id = 3", 7)
      eq(table.concat(r, "|"), "-5|32767|0.5|-0.00125|12:34:56.0000|2024-02-29|" ..
                               "1999-12-31 23:59:58.0000", "text forms")
   end

   -- a prepared SELECT: its result set, parameters of several types, a NULL parameter
   st = con:prepare("SELECT id, vc FROM fbw_types WHERE id >= ? AND (vc LIKE ? OR ? IS NULL) " ..
                    "ORDER BY id")
   local p1, p2, p3 = st:bind_create(T.INT), st:bind_create(T.VARCHAR, 20),
                      st:bind_create(T.VARCHAR, 5)
   st:bind_param(p1, p2, p3)
   p1:set(1)
   p2:set("it''s%")
   p3:set("x")
   local rs = exec(con, st, CNT.READ, 0, 2, "prepared SELECT, no match")
   p2:set("it's%")
   rs = exec(con, st, CNT.READ, 1, 2, "prepared SELECT, quote in a parameter")
   eq(rs:fetch_row()[1], "1", "prepared SELECT row")
   p3:set(nil)
   rs = exec(con, st, CNT.READ, 4, 2, "prepared SELECT, NULL parameter")
   st:close()

   -- prepared UPDATE / DELETE: WRITE with the affected rows, OTHER when nothing matched
   st = con:prepare("UPDATE fbw_types SET vc = ? WHERE id <= ?")
   p1, p2 = st:bind_create(T.VARCHAR, 10), st:bind_create(T.BIGINT)
   st:bind_param(p1, p2)
   p1:set("upd")
   p2:set(0)
   exec(con, st, CNT.OTHER, 0, nil, "UPDATE of no row")
   p2:set(2)
   exec(con, st, CNT.WRITE, 2, nil, "UPDATE of 2 rows")
   st:close()
   st = con:prepare("DELETE FROM fbw_types WHERE id > ?")
   p1 = st:bind_create(T.BIGINT)
   st:bind_param(p1)
   p1:set(2)
   exec(con, st, CNT.WRITE, 2, nil, "DELETE of 2 rows")
   exec(con, st, CNT.OTHER, 0, nil, "DELETE of no row")
   st:close()
end

-- Text bound to BLOB parameters: fbwire binds them as VARCHAR, which the server turns into a
-- blob (no op_create_blob2, no extra round trip), fbclient as SQL_TEXT, likewise; autocommit and
-- inside a transaction (pipelined by fbwire), text and binary blobs, read back whole.
local function blob_binds(con)
   q(con, "RECREATE TABLE fbw_blobs (id INTEGER NOT NULL PRIMARY KEY, doc BLOB SUB_TYPE TEXT, " ..
          "bin BLOB SUB_TYPE BINARY)", CNT.OTHER, 0)
   local st = con:prepare("INSERT INTO fbw_blobs (id, doc, bin) VALUES (?, ?, ?)")
   local pid = st:bind_create(T.INT)
   local pdoc = st:bind_create(T.VARCHAR, 32765)
   local pbin = st:bind_create(T.VARCHAR, 100)
   st:bind_param(pid, pdoc, pbin)
   -- 30000 bytes: more than one segment's worth. Under --db-ps-mode=disable sysbench writes the
   -- values into the SQL text, and Firebird takes a UTF8 string literal of at most 16383
   -- characters: 16000 bytes there.
   local long = string.rep("0123456789", sysbench.opt.db_ps_mode == "disable" and 1600 or 3000)
   pid:set(1)
   pdoc:set(long)
   pbin:set("bytes")
   exec(con, st, CNT.WRITE, 1, nil, "text into BLOB parameters")
   pid:set(2)
   pdoc:set(nil)
   pbin:set("")
   exec(con, st, CNT.WRITE, 1, nil, "NULL and empty text into BLOB parameters")
   local b, c = con:prepare("BEGIN"), con:prepare("COMMIT")
   exec(con, b, CNT.OTHER, 0, nil, "BEGIN")
   for i = 3, 5 do
      pid:set(i)
      pdoc:set("in a transaction " .. i)
      pbin:set(nil)
      exec(con, st, CNT.WRITE, nil, nil, "text into a BLOB parameter in a transaction")
   end
   exec(con, c, CNT.OTHER, 0, nil, "COMMIT")
   b:close()
   c:close()
   st:close()
   local r = row_of(con, "SELECT doc, bin FROM fbw_blobs WHERE id = 1", 2)
   eq(r[1], long, #long .. " bytes of text through a BLOB parameter")
   eq(r[2], "bytes", "text into a binary BLOB parameter")
   eq(count_rows(con, "fbw_blobs", "id = 2 AND doc IS NULL AND OCTET_LENGTH(bin) = 0"), "1",
      "NULL and empty text into BLOB parameters")
   eq(row_of(con, "SELECT doc FROM fbw_blobs WHERE id = 4", 1)[1], "in a transaction 4",
      "text into a BLOB parameter in a transaction")
   eq(count_rows(con, "fbw_blobs", "bin IS NULL"), "3", "NULL binary blobs in a transaction")
end

local function transactions(con)
   local b, c, r = con:prepare("BEGIN"), con:prepare("COMMIT"), con:prepare("ROLLBACK")
   exec(con, b, CNT.OTHER, 0, nil, "BEGIN")
   q(con, "INSERT INTO fbw_api (id, v) VALUES (10, 'rolled back')", CNT.WRITE, 1)
   exec(con, r, CNT.OTHER, 0, nil, "ROLLBACK")
   exec(con, b, CNT.OTHER, 0, nil, "BEGIN")
   q(con, "INSERT INTO fbw_api (id, v) VALUES (11, 'committed')", CNT.WRITE, 1)
   exec(con, c, CNT.OTHER, 0, nil, "COMMIT")
   exec(con, c, CNT.OTHER, 0, nil, "COMMIT without a transaction")
   q(con, "BEGIN", CNT.OTHER, 0)
   q(con, "INSERT INTO fbw_api (id, v) VALUES (12, 'committed by a second BEGIN')", CNT.WRITE, 1)
   q(con, "BEGIN", CNT.OTHER, 0) -- MySQL semantics: BEGIN commits the open transaction
   q(con, "ROLLBACK", CNT.OTHER, 0)
   b:close()
   c:close()
   r:close()
   eq(count_rows(con, "fbw_api", "id >= 10"), "2", "rolled back / committed rows")
end

-- Prepared statements inside BEGIN ... COMMIT, in either --fbwire-pipeline mode (fbclient: off).
-- Pipelined (transaction), a SELECT's nrows is unknown (UINT32_MAX) until its rows are read and
-- an error surfaces at COMMIT; off, both are immediate. Rows and outcomes are the same.
local function prepared_in_transaction(con)
   local sel = con:prepare("SELECT id, v FROM fbw_api WHERE id BETWEEN ? AND ? ORDER BY id")
   local a, b = sel:bind_create(T.INT), sel:bind_create(T.INT)
   sel:bind_param(a, b)
   local ins = con:prepare("INSERT INTO fbw_api (id, v) VALUES (?, 'in a transaction')")
   local p = ins:bind_create(T.INT)
   ins:bind_param(p)
   local begin, commit = con:prepare("BEGIN"), con:prepare("COMMIT")
   exec(con, begin, CNT.OTHER, 0, nil, "BEGIN")
   a:set(1)
   b:set(3)
   local rs = sel:execute()
   local pipelined = tonumber(rs.nrows) == 4294967295
   booked_as(con, CNT.READ, pipelined and 4294967295 or 3, 2, "prepared range in a transaction")
   eq(rs:fetch_row()[1], "1", "first row")
   eq(tonumber(rs.nrows), 3, "nrows once read")
   eq(rs:fetch_row()[1], "2", "second row")
   eq(rs:fetch_row()[1], "3", "third row")
   eq(rs:fetch_row(), nil, "three rows")
   p:set(30)
   exec(con, ins, CNT.WRITE, pipelined and 0 or 1, nil, "prepared INSERT in a transaction")
   exec(con, commit, CNT.OTHER, 0, nil, "COMMIT")
   eq(count_rows(con, "fbw_api", "id = 30"), "1", "committed")
   -- a duplicate key: at the INSERT (off) or at COMMIT (pipelined), ignorable either way, and
   -- nothing of the transaction is committed
   exec(con, begin, CNT.OTHER, 0, nil, "BEGIN")
   p:set(31)
   exec(con, ins, CNT.WRITE, pipelined and 0 or 1, nil, "INSERT before the duplicate")
   p:set(1)
   local failing = pipelined and commit or ins
   if pipelined then
      exec(con, ins, CNT.WRITE, 0, nil, "pipelined duplicate INSERT")
   end
   local ok, err = pcall(failing.execute, failing)
   eq(ok, false, "duplicate reported")
   booked_as(con, CNT.ERROR, nil, nil, "duplicate reported")
   eq(type(err), "table", "duplicate: restart-event error")
   eq(err.sql_errno, 335544665, "duplicate: sql_errno")
   if pipelined then
      local msg = ffi.string(err.sql_errmsg)
      eq(msg:find("statement 2 of 2 of the pipelined transaction", 1, true) ~= nil, true,
         "the pipelined error names its statement: " .. msg)
   end
   eq(count_rows(con, "fbw_api", "id = 31"), "0", "nothing of the failed transaction committed")
   sel:close()
   ins:close()
   begin:close()
   commit:close()
end

local function errors(con)
   -- fatal: a string error, the connection stays usable
   local e = q_fail(con, "SELEC 1 FROM RDB$DATABASE", 335544569, false)
   eq(e:find("state = '42000'", 1, true) ~= nil, true, "syntax error SQLSTATE in '" .. e .. "'")
   eq(e:find("Token unknown", 1, true) ~= nil, true, "syntax error message")
   q_fail(con, "SELECT 1 / 0 FROM RDB$DATABASE", 335544321, false)
   -- plain DML text goes out right behind its own prepare, in one write: when the prepare fails,
   -- its error is the statement's (not a usage error of the execute queued behind it)
   e = q_fail(con, "INSERT INTO fbw_no_such_table (id) VALUES (1)", 335544569, false)
   eq(e:find("state = '42S02'", 1, true) ~= nil, true, "unknown table SQLSTATE in '" .. e .. "'")
   q(con, "BEGIN", CNT.OTHER, 0)
   e = q_fail(con, "DELETE FROM fbw_no_such_table WHERE id = 1", 335544569, false)
   eq(e:find("Table unknown", 1, true) ~= nil, true, "unknown table message in '" .. e .. "'")
   q(con, "ROLLBACK", CNT.OTHER, 0)
   eq(row_of(con, "SELECT 'still usable' FROM RDB$DATABASE", 1)[1], "still usable", "after errors")
   -- a prepare that fails raises at once (sysbench counts nothing for a prepare); emulated
   -- statements (--db-ps-mode=disable) reach the server only when executed
   local bad = "SELECT nosuchcolumn FROM RDB$DATABASE"
   local ok, perr = pcall(con.prepare, con, bad)
   if sysbench.opt.db_ps_mode == "disable" then
      eq(ok, true, "emulated prepare of a bad statement")
      ok, perr = pcall(perr.execute, perr)
      booked_as(con, CNT.ERROR, nil, nil, "emulated bad statement")
   end
   eq(ok, false, "bad prepare fails")
   eq(tostring(perr):find("errno = 335544569", 1, true) ~= nil, true, "bad prepare: " .. tostring(perr))
   -- ignorable (unique violation is in the default --fbwire-ignore-errors): a restart-event
   -- error table, and the driver rolled back the transaction the event had open
   q(con, "BEGIN", CNT.OTHER, 0)
   q(con, "INSERT INTO fbw_api (id, v) VALUES (20, 'gone with the conflict')", CNT.WRITE, 1)
   e = q_fail(con, "INSERT INTO fbw_api (id, v) VALUES (1, 'duplicate')", 335544665, true)
   eq(ffi.string(e.sql_state), "23000", "unique violation SQLSTATE")
   q(con, "COMMIT", CNT.OTHER, 0)
   eq(count_rows(con, "fbw_api", "id = 20"), "0", "ignorable error rolled the transaction back")
   -- a prepared statement failing the same way
   local st = con:prepare("INSERT INTO fbw_api (id) VALUES (?)")
   local p = st:bind_create(T.INT)
   st:bind_param(p)
   p:set(1)
   local ok2, err2 = pcall(st.execute, st)
   eq(ok2, false, "prepared duplicate fails")
   booked_as(con, CNT.ERROR, nil, nil, "prepared duplicate")
   eq(type(err2), "table", "prepared duplicate: restart-event error")
   p:set(21)
   exec(con, st, CNT.WRITE, 1, nil, "the statement works after its error")
   st:close()
   -- a value too long for its column: fatal, SQLSTATE 22001, nothing inserted
   st = con:prepare("INSERT INTO fbw_api (id, v) VALUES (?, ?)")
   local pa, pb = st:bind_create(T.INT), st:bind_create(T.VARCHAR, 50)
   st:bind_param(pa, pb)
   pa:set(22)
   pb:set(string.rep("z", 41)) -- v is VARCHAR(40)
   ok2, err2 = pcall(st.execute, st)
   eq(ok2, false, "too long a value fails")
   booked_as(con, CNT.ERROR, nil, nil, "too long a value")
   eq(tostring(err2):find("state = '22001'", 1, true) ~= nil, true, "truncation: " .. tostring(err2))
   pb:set(string.rep("z", 40))
   exec(con, st, CNT.WRITE, 1, nil, "a value of the column's length")
   st:close()
   eq(count_rows(con, "fbw_api", "id = 22 AND CHAR_LENGTH(v) = 40"), "1", "one row of 40")
end

local BULK_PACKET = 512 * 1024 -- sysbench's bulk buffer; it flushes before overflowing it

local function bulk(con)
   q(con, "RECREATE TABLE fbw_bulk (id INTEGER NOT NULL PRIMARY KEY, v VARCHAR(250))", CNT.OTHER, 0)
   -- 6000 rows of ~215 bytes: sysbench flushes about every 2400 rows as one multi-row INSERT;
   -- each flush must be booked as one WRITE whose nrows is the rows it carried
   local rs = rs_of(con)
   local prefix = "INSERT INTO fbw_bulk (id, v) VALUES"
   con:bulk_insert_init(prefix)
   rs.counter = CNT.OTHER -- marker: a flush sets WRITE
   local since, flushes, total = 0, 0, 6000
   local pad = string.rep("p", 200)
   for i = 1, total do
      con:bulk_insert_next(string.format("(%d, '%s''%05d')", i, pad, i))
      since = since + 1
      if rs.counter == CNT.WRITE then
         flushes = flushes + 1
         eq(tonumber(rs.nrows), since - 1, "rows of bulk flush " .. flushes)
         since = 1 -- the row that did not fit starts the next statement
         rs.counter = CNT.OTHER
      end
   end
   con:bulk_insert_done()
   eq(tonumber(rs.counter), CNT.WRITE, "final flush counted as a write")
   eq(tonumber(rs.nrows), since, "rows of the final flush")
   flushes = flushes + 1
   eq(flushes >= 3, true, "bulk insert took several flushes (" .. flushes .. ")")
   booked[CNT.WRITE] = booked[CNT.WRITE] + flushes
   eq(count_rows(con, "fbw_bulk"), tostring(total), "bulk rows")
   eq(row_of(con, "SELECT v FROM fbw_bulk WHERE id = 4321", 1)[1], pad .. "'04321", "bulk value")

   -- a multi-row INSERT is all or nothing: a duplicate in its last row leaves no row behind
   q_fail(con, "INSERT INTO fbw_bulk (id, v) VALUES (7001, 'a'), (7002, 'b'), (1, 'dup')",
          335544665, true)
   eq(count_rows(con, "fbw_bulk", "id > 7000"), "0", "failed multi-row INSERT left nothing")
   -- inside a transaction a failing multi-row INSERT (NOT NULL violated: fatal) is undone alone
   q(con, "BEGIN", CNT.OTHER, 0)
   q(con, "INSERT INTO fbw_bulk (id, v) VALUES (8001, 'kept')", CNT.WRITE, 1)
   q_fail(con, "INSERT INTO fbw_bulk (id, v) VALUES (8002, 'x'), (NULL, 'y')", 335544347, false)
   q(con, "INSERT INTO fbw_bulk (id, v) VALUES (8004, 'a'), (8005, 'b')", CNT.WRITE, 2)
   q(con, "COMMIT", CNT.OTHER, 0)
   eq(count_rows(con, "fbw_bulk", "id > 8000"), "3", "rows kept around a failed multi-row INSERT")
   -- a prepared multi-row INSERT (executed as text)
   local st = con:prepare("INSERT INTO fbw_bulk (id, v) VALUES (9001, 'x'), (9002, NULL)")
   exec(con, st, CNT.WRITE, 2, nil, "prepared multi-row INSERT")
   st:close()
   eq(count_rows(con, "fbw_bulk", "id > 9000 AND (v = 'x' OR v IS NULL)"), "2", "multi-row values")
end

local function dialect(con)
   q(con, "DROP TABLE IF EXISTS fbw_nosuch", CNT.OTHER, 0)
   q(con, "CREATE TABLE IF NOT EXISTS fbw_maybe (id INTEGER)", CNT.OTHER, 0)
   q(con, "CREATE TABLE IF NOT EXISTS fbw_maybe (id INTEGER)", CNT.OTHER, 0)
   q(con, "DROP TABLE IF EXISTS fbw_maybe", CNT.OTHER, 0)
   eq(count_rows(con, "RDB$RELATIONS", "RDB$RELATION_NAME = 'FBW_MAYBE'"), "0", "IF EXISTS")
end

local function reconnects(drv, con)
   local st = con:prepare("SELECT COUNT(*) FROM fbw_api WHERE id <= ?")
   local p = st:bind_create(T.INT)
   st:bind_param(p)
   p:set(3)
   eq(exec(con, st, CNT.READ, 1, 1, "before reconnect"):fetch_row()[1], "3", "before reconnect")
   local id1 = row_of(con, "SELECT CURRENT_CONNECTION FROM RDB$DATABASE", 1)[1]
   -- an explicit reconnect of a healthy connection: booked as a reconnect, statements survive
   con:reconnect()
   booked[CNT.RECONNECT] = booked[CNT.RECONNECT] + 1
   local id2 = row_of(con, "SELECT CURRENT_CONNECTION FROM RDB$DATABASE", 1)[1]
   eq(id2 ~= id1, true, "a new attachment after reconnect")
   eq(exec(con, st, CNT.READ, 1, 1, "after reconnect"):fetch_row()[1], "3", "after reconnect")
   -- a killed attachment: a clear fatal error, then con:reconnect() brings it back
   local killer = drv:connect()
   killer:query("DELETE FROM MON$ATTACHMENTS WHERE MON$ATTACHMENT_ID = " .. id2)
   booked_as(killer, tonumber(rs_of(killer).counter), nil, nil, "kill")
   local e = q_fail(con, "SELECT 1 FROM RDB$DATABASE", 335544856, false)
   print("lost connection: " .. e)
   con:reconnect()
   booked[CNT.RECONNECT] = booked[CNT.RECONNECT] + 1
   eq(exec(con, st, CNT.READ, 1, 1, "after a kill"):fetch_row()[1], "3", "statement after a kill")
   eq(row_of(con, "SELECT 1 FROM RDB$DATABASE", 1)[1], "1", "query after a kill")
   st:close()
   killer:disconnect()
end

local function cleanup_tables(con)
   for _, t in ipairs({ "fbw_api", "fbw_types", "fbw_bulk", "fbw_blobs" }) do
      q(con, "DROP TABLE IF EXISTS " .. t, CNT.OTHER, 0)
   end
end

function event()
   local drv = sysbench.sql.driver()
   driver_name = drv:name()
   local con = drv:connect()
   results(con)
   binds(con)
   blob_binds(con)
   transactions(con)
   prepared_in_transaction(con)
   errors(con)
   bulk(con)
   dialect(con)
   reconnects(drv, con)
   cleanup_tables(con)
   con:disconnect()
   print(string.format("EXPECT read=%d write=%d other=%d errors=%d reconnects=%d",
                       booked[CNT.READ], booked[CNT.WRITE], booked[CNT.OTHER],
                       booked[CNT.ERROR], booked[CNT.RECONNECT]))
   print(string.format("API OK (%d checks, driver %s, ps-mode %s)", checks, driver_name,
                       sysbench.opt.db_ps_mode))
end
