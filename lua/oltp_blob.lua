#!/usr/bin/env sysbench
-- SPDX-License-Identifier: MIT
-- oltp_blob.lua - a blob workload in portable SQL: one table of rows with a text blob of
-- --blob_min..--blob_max random characters; each event runs --blob_selects range SELECTs of
-- --blob_rows rows with their blobs and --blob_inserts INSERTs of a row with a new blob.
--
--   sysbench lua/oltp_blob.lua --db-driver=fbwire|fbclient|pgsql|mysql ... prepare|run|cleanup
--
-- The same SQL runs through every driver; only the blob column's type differs (BLOB SUB_TYPE
-- TEXT on Firebird, TEXT on PostgreSQL and MariaDB/MySQL). The INSERTs carry their text as a
-- literal, as they always have, so results stay comparable (fbwire and fbclient also bind text to
-- a blob parameter: docs/sysbench.md "Bind types"); the server makes the blob itself. Rows
-- inserted by the run get ids above --table_size: the SELECT ranges never see them, so every
-- run reads the same data. --blob_check=on checks every blob read (length within bounds, only
-- the characters written): a driver that returns a marker or an id instead of the text fails.
-- Round trips per event: docs/sysbench.md "The blob workload".

sysbench.cmdline.options = {
   table_size = {"Rows in the table", 10000},
   tables = {"Taken for the upstream scripts' option (fbwire-compare passes it); one table", 1},
   blob_rows = {"Rows (with their blobs) each SELECT reads", 10},
   blob_selects = {"Range SELECTs per event", 1},
   blob_inserts = {"INSERTs of a row with a blob per event", 1},
   blob_min = {"Shortest blob text in bytes", 100},
   blob_max = {"Longest blob text in bytes", 2000},
   blob_check = {"Check the text of every blob read", false},
}

local TABLE = "sbblob"

local function opt() return sysbench.opt end

local function blob_type(drv)
   local n = drv:name()
   if n == "fbwire" or n == "fbclient" then
      return "BLOB SUB_TYPE TEXT"
   elseif n == "pgsql" or n == "mysql" then
      return "TEXT"
   end
   error("oltp_blob.lua: unsupported driver " .. n)
end

-- Random letters and digits of a length in [blob_min, blob_max] (sysbench's own generator).
local function blob_text()
   local n = sysbench.rand.uniform(opt().blob_min, opt().blob_max)
   return sysbench.rand.string(string.rep("@", n))
end

local function blob_prepare_table(drv, con)
   con:query(string.format("CREATE TABLE %s (id INTEGER NOT NULL, k INTEGER NOT NULL, doc %s)",
                           TABLE, blob_type(drv)))
   con:query(string.format("CREATE INDEX %s_id ON %s (id)", TABLE, TABLE))
   print(string.format("Inserting %d rows into '%s'", opt().table_size, TABLE))
   -- One INSERT per row with its text as a literal, 500 rows per transaction: sysbench's bulk
   -- insert layer would bind the text to a blob parameter, which not every driver takes.
   for i = 1, opt().table_size do
      if i % 500 == 1 then con:query("BEGIN") end
      con:query(string.format("INSERT INTO %s (id, k, doc) VALUES (%d, %d, '%s')", TABLE, i,
                              sysbench.rand.uniform(1, opt().table_size), blob_text()))
      if i % 500 == 0 or i == opt().table_size then con:query("COMMIT") end
   end
end

function cmd_prepare()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   blob_prepare_table(drv, con)
end

sysbench.cmdline.commands = {
   prepare = {cmd_prepare}
}

function cleanup()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   print(string.format("Dropping table '%s'...", TABLE))
   con:query("DROP TABLE " .. TABLE)
end

function thread_init()
   if opt().blob_min < 1 or opt().blob_max < opt().blob_min then
      error("oltp_blob.lua: need 1 <= --blob_min <= --blob_max")
   end
   if opt().blob_rows < 1 or opt().blob_rows > opt().table_size then
      error("oltp_blob.lua: need 1 <= --blob_rows <= --table_size")
   end
   drv = sysbench.sql.driver()
   con = drv:connect()
   sel = con:prepare(string.format("SELECT id, doc FROM %s WHERE id BETWEEN ? AND ?", TABLE))
   lo = sel:bind_create(sysbench.sql.type.INT)
   hi = sel:bind_create(sysbench.sql.type.INT)
   sel:bind_param(lo, hi)
end

function thread_done()
   sel:close()
   con:disconnect()
end

local function check_row(row)
   local doc = row[2]
   local n = doc and #doc or -1
   if n < opt().blob_min or n > opt().blob_max or doc:find("[^%w]") then
      error(string.format("oltp_blob.lua: row %s: blob of %d bytes is not the text written (%q)",
                          tostring(row[1]), n, doc and doc:sub(1, 40) or "NULL"))
   end
end

local function select_rows()
   local first = sysbench.rand.uniform(1, opt().table_size - opt().blob_rows + 1)
   lo:set(first)
   hi:set(first + opt().blob_rows - 1)
   local rs = sel:execute()
   -- Rows are read only to check them: every driver has the whole result by now, and sysbench's
   -- mysql driver gives no rows of a prepared statement to Lua (fetch_row answers nil).
   for _ = 1, opt().blob_check and tonumber(rs.nrows) or 0 do
      local row = rs:fetch_row()
      if not row then break end
      check_row(row)
   end
end

local function insert_row()
   con:query(string.format("INSERT INTO %s (id, k, doc) VALUES (%d, %d, '%s')", TABLE,
                           opt().table_size + sysbench.rand.uniform(1, opt().table_size),
                           sysbench.rand.uniform(1, opt().table_size), blob_text()))
end

function event()
   for _ = 1, opt().blob_selects do select_rows() end
   for _ = 1, opt().blob_inserts do insert_row() end
end
