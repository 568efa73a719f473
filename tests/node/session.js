// SPDX-License-Identifier: MIT
// session.js - a node-firebird session of its own for tests/node/node-firebird.sh: DDL,
// parameterised inserts, point and range selects, a blob written and read, a rollback and a
// commit, an SQL error. Prints what it did as one JSON line, which the test checks the capture
// against. FBN_MODE=drop drops the database instead (not captured).
// Environment: FBN_HOST FBN_PORT FBN_DB FBN_TABLE FBN_CRYPT (1: node-firebird's default wire
// crypt, else disabled) ISC_USER ISC_PASSWORD.
'use strict';
const Firebird = require('node-firebird');

const T = process.env.FBN_TABLE;
const opts = {
    host: process.env.FBN_HOST,
    port: Number(process.env.FBN_PORT),
    database: process.env.FBN_DB,
    user: process.env.ISC_USER,
    password: process.env.ISC_PASSWORD,
    blobAsText: true,
    // Named: without it node-firebird 2.17.1's first plugin attempt ends in "unavailable
    // database" on these servers when wire crypt is disabled (a capture shows why: the
    // op_cont_auth after op_accept_data without server data is refused).
    pluginName: Firebird.AUTH_PLUGIN_SRP256,
    wireCrypt: process.env.FBN_CRYPT === '1' ? Firebird.WIRE_CRYPT_ENABLE : Firebird.WIRE_CRYPT_DISABLE,
};

async function session() {
    const db = await Firebird.attachOrCreateAsync(opts);
    const out = { sql: [] };
    const q = async (sql, params) => {
        out.sql.push(sql);
        return db.queryAsync(sql, params);
    };
    await q(`CREATE TABLE ${T} (ID INTEGER NOT NULL PRIMARY KEY, NAME VARCHAR(20), ` +
            'AMOUNT NUMERIC(9,2), DOC BLOB SUB_TYPE TEXT)');
    out.inserts = 0;
    for (let i = 1; i <= 20; i++) {
        await q(`INSERT INTO ${T} (ID, NAME, AMOUNT) VALUES (?, ?, ?)`, [i, 'row ' + i, i * 1.5]);
        out.inserts++;
    }
    const p = await q(`SELECT NAME FROM ${T} WHERE ID = ?`, [7]);
    out.point = p[0].NAME;
    const r = await q(`SELECT ID, NAME FROM ${T} WHERE ID BETWEEN ? AND ? ORDER BY ID`, [3, 12]);
    out.range_rows = r.length;
    const text = 'blob text '.repeat(300);
    out.blob_bytes = text.length;
    await q(`INSERT INTO ${T} (ID, NAME, DOC) VALUES (?, ?, ?)`, [100, 'blob', Buffer.from(text)]);
    const b = await q(`SELECT DOC FROM ${T} WHERE ID = ?`, [100]);
    out.blob_read = b[0].DOC === text;
    const t1 = await db.transactionAsync();
    await t1.queryAsync(`INSERT INTO ${T} (ID, NAME) VALUES (200, 'rolled back')`);
    await t1.rollbackAsync();
    const t2 = await db.transactionAsync();
    await t2.queryAsync(`INSERT INTO ${T} (ID, NAME) VALUES (201, 'committed')`);
    await t2.commitAsync();
    const c = await q(`SELECT COUNT(*) AS N FROM ${T} WHERE ID IN (200, 201)`);
    out.kept = Number(c[0].N);
    try {
        await q(`SELECT * FROM ${T}_NO_SUCH_TABLE`);
        out.error = null;
    } catch (e) {
        out.error = String(e.message);
    }
    await db.detachAsync();
    console.log(JSON.stringify(out));
}

async function drop() {
    const db = await Firebird.attachAsync(opts);
    await db.dropAsync();
}

(process.env.FBN_MODE === 'drop' ? drop() : session()).catch((e) => {
    console.error('session.js:', e && e.message ? e.message : e);
    process.exit(1);
});
