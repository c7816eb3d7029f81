#!/usr/bin/env node
// A miniature over stdio (issue 51): the pure capabilities in Node.js, written from the spec, whose
// per-document counter is a plain JavaScript object when RQS_COUNTER is "object" (the fault) and a Map
// otherwise (conforming). A plain object already answers `constructor`, `toString`, `valueOf`,
// `hasOwnProperty` and `__proto__`: `(counts[docId] || 0) + 1` is then text, `>= cap` never holds, and the
// per-document cap never binds for a document with such an id. Only those ids show it.
'use strict';

const readline = require('node:readline');

const CANONICAL = new Map([
  ['dense', 'dense'], ['hybrid', 'hybrid'],
  ['l2_distance', 'dense'], ['rrf_fused', 'hybrid'], ['bm25_only_no_dense', 'hybrid'],
]);
const PLAIN_OBJECT = process.env.RQS_COUNTER === 'object';

function canonical(label) {
  if (!CANONICAL.has(label)) throw new Error(`unknown scoreLabel ${JSON.stringify(label)}: use dense or hybrid`);
  return CANONICAL.get(label);
}

function fromL2(d, maxL2) {
  if (d === null || d === undefined) return 0;
  return Math.max(0, 1 - Math.min(Math.max(d, 0), maxL2) / maxL2);
}

function normalize(r) {
  const maxL2 = r.maxL2Distance ?? 2;
  if (canonical(r.scoreLabel) === 'dense') return fromL2(r.score ?? null, maxL2);
  if (r.denseDistance !== null && r.denseDistance !== undefined) return fromL2(r.denseDistance, maxL2);
  const n = Math.max(r.batchSize ?? 1, 1);
  return Math.max(0, 1 - ((r.originalRank ?? 1) - 1) / n);
}

function counter() {
  if (PLAIN_OBJECT) {
    const counts = {};
    return { get: (k) => counts[k] || 0, bump: (k) => { counts[k] = (counts[k] || 0) + 1; } };
  }
  const counts = new Map();
  return { get: (k) => counts.get(k) || 0, bump: (k) => counts.set(k, (counts.get(k) || 0) + 1) };
}

function reasons(c, hints) {
  const text = (c.text || '').toLowerCase();
  const has = (s) => Boolean(s) && text.includes(s.toLowerCase());
  const out = ['retrieval_rank'];
  if (has(hints.domain)) out.push('l0_domain_overlap');
  if ((hints.entities || []).some(has)) out.push('l0_entity_overlap');
  if ((hints.keywords || []).some(has)) out.push('l0_keyword_overlap');
  if (hints.sourceType && c.sourceType === hints.sourceType) out.push('l0_source_type_match');
  return out;
}

function postProcess(request) {
  const hints = request.hints || {};
  const cfg = { maxL2Distance: 2, highlyRelevantThreshold: 0.75, referenceThreshold: 0.5, returnN: 5,
    maxChunksPerDocument: 2, ...(request.config || {}) };
  const all = request.candidates;
  const ordered = all.map((c, i) => [c, i]).sort((a, b) => a[0].originalRank - b[0].originalRank || a[1] - b[1]);
  const blocks = [];
  const dropped = [];
  const seen = new Set();
  const perDoc = counter();
  for (const [c] of ordered) {
    const key = `${c.docId}#${c.chunkIndex}`;
    let reason = null;
    if (seen.has(key)) reason = 'duplicate';
    else if (perDoc.get(c.docId) >= cfg.maxChunksPerDocument) reason = 'per_document_cap';
    else if (blocks.length >= cfg.returnN) reason = 'return_n';
    seen.add(key);
    if (reason === null || reason === 'return_n') perDoc.bump(c.docId);
    if (reason !== null) {
      dropped.push({ evidenceKey: key, originalRank: c.originalRank, reason });
      continue;
    }
    const q = normalize({ ...c, batchSize: all.length, maxL2Distance: cfg.maxL2Distance });
    blocks.push({ evidenceKey: key, docId: c.docId, chunkIndex: c.chunkIndex, originalRank: c.originalRank,
      qualityScore: q, scoreLabel: canonical(c.scoreLabel), hitReasons: reasons(c, hints) });
  }
  let top = null;
  for (const b of blocks) if (top === null || b.qualityScore > top) top = b.qualityScore;
  let level = 'NONE';
  if (top !== null && top >= cfg.highlyRelevantThreshold) level = 'PRECISE';
  else if (top !== null && top >= cfg.referenceThreshold) level = 'RELEVANT';
  else if (top !== null && top > 0) level = 'WEAK';
  return { blocks, dropped, relevanceLevel: level, topQualityScore: top,
    isLowQuality: top === null || top < cfg.referenceThreshold };
}

const HANDLERS = {
  start: () => ({ name: PLAIN_OBJECT ? 'PlainObjectCounter' : 'MapCounter', version: '0', language: 'javascript',
    capabilities: ['labels', 'quality', 'post_process'] }),
  canonicalize_label: (m) => canonical(m.label),
  quality_score: (m) => normalize(m.request),
  post_process: (m) => postProcess(m.request),
  stop: () => null,
};

async function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const message = JSON.parse(line);
    let reply;
    try {
      const handler = HANDLERS[message.type];
      reply = handler ? { seq: message.seq, result: await handler(message) }
        : { seq: message.seq, skipped: `no handler for ${message.type}` };
    } catch (err) {
      reply = { seq: message.seq, error: { message: String(err.message || err), kind: err.name } };
    }
    await new Promise((resolve) => process.stdout.write(`${JSON.stringify(reply)}\n`, resolve));
    if (message.type === 'stop') break;
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
