#!/usr/bin/env node
// A rag-retrieval-quality-score implementation in Node.js, judged by the conformance kit over stdio.
//
//   rag-conformance run --adapter-cmd "node examples/node/impl.js"
//
// Protocol: one JSON object per line on stdin; one reply per line on stdout,
// {"seq": <the request's seq>, "result": ...} (or "skipped" / "error"). Everything else goes to stderr.
'use strict';

const readline = require('node:readline');

// Keep stdout for protocol lines only: a library that logs to stdout would corrupt the stream.
const protocolWrite = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);
console.log = console.info = console.debug = console.error;

const { MilvusClient, DataType, FunctionType, RRFRanker } = require('@zilliz/milvus2-sdk-node');

const LABELS = { dense: 'dense', hybrid: 'hybrid', l2_distance: 'dense', rrf_fused: 'hybrid', bm25_only_no_dense: 'hybrid' };
const OUTPUT = ['doc_id', 'chunk_index', 'text', 'category', 'source_type'];

// -- labels, the single normalizer, post-process -----------------------------------------------

function canonicalize(label) {
  if (!Object.hasOwn(LABELS, label)) throw new Error(`unknown scoreLabel ${JSON.stringify(label)}`);
  return LABELS[label];
}

function l2Quality(distance, maxL2) {
  if (distance === null || distance === undefined) return 0;
  return Math.max(0, 1 - Math.min(Math.max(distance, 0), maxL2) / maxL2);
}

// Branches on the canonical label only; a hybrid rank maps linearly, rank 1 -> 1.0.
function quality(label, score, rank, batchSize, maxL2, denseDistance) {
  if (canonicalize(label) === 'dense') return l2Quality(score, maxL2);
  if (denseDistance !== null && denseDistance !== undefined) return l2Quality(denseDistance, maxL2);
  return Math.max(0, 1 - (rank - 1) / batchSize);
}

function hitReasons(c, hints) {
  const text = (c.text || '').toLowerCase();
  const has = (s) => Boolean(s) && text.includes(s.toLowerCase());
  const reasons = ['retrieval_rank']; // explanations only: they never move or rescore a hit
  if (has(hints.domain)) reasons.push('l0_domain_overlap');
  if ((hints.entities || []).some(has)) reasons.push('l0_entity_overlap');
  if ((hints.keywords || []).some(has)) reasons.push('l0_keyword_overlap');
  if (hints.sourceType && c.sourceType === hints.sourceType) reasons.push('l0_source_type_match');
  return reasons;
}

function postProcess({ candidates, hints = {}, config = {} }) {
  const cfg = {
    maxL2Distance: 2, highlyRelevantThreshold: 0.75, referenceThreshold: 0.5, returnN: 5, maxChunksPerDocument: 2,
    ...config,
  };
  const ordered = [...candidates].sort((a, b) => a.originalRank - b.originalRank); // stable
  const blocks = [];
  const dropped = [];
  const seen = new Set();
  const perDoc = new Map();
  for (const c of ordered) {
    const key = `${c.docId}#${c.chunkIndex}`;
    let reason = null;
    if (seen.has(key)) reason = 'duplicate';
    else if ((perDoc.get(c.docId) || 0) >= cfg.maxChunksPerDocument) reason = 'per_document_cap';
    else if (blocks.length >= cfg.returnN) reason = 'return_n';
    seen.add(key);
    if (reason === null || reason === 'return_n') perDoc.set(c.docId, (perDoc.get(c.docId) || 0) + 1);
    if (reason) {
      dropped.push({ evidenceKey: key, originalRank: c.originalRank, reason });
      continue;
    }
    const q = quality(c.scoreLabel, c.score, c.originalRank, candidates.length, cfg.maxL2Distance, c.denseDistance);
    blocks.push({
      evidenceKey: key, docId: c.docId, chunkIndex: c.chunkIndex, originalRank: c.originalRank,
      qualityScore: q, scoreLabel: canonicalize(c.scoreLabel), hitReasons: hitReasons(c, hints),
    });
  }
  const top = blocks.length ? Math.max(...blocks.map((b) => b.qualityScore)) : null;
  let level = 'NONE';
  if (top !== null && top >= cfg.highlyRelevantThreshold) level = 'PRECISE';
  else if (top !== null && top >= cfg.referenceThreshold) level = 'RELEVANT';
  else if (top !== null && top > 0) level = 'WEAK';
  return {
    blocks, dropped, relevanceLevel: level, topQualityScore: top,
    isLowQuality: top === null || top < cfg.referenceThreshold,
  };
}

// -- the Milvus store ---------------------------------------------------------------------------

const store = { client: null, collection: null };

async function check(promise, what) {
  const res = await promise;
  const status = res && (res.status || res);
  if (status && status.error_code && status.error_code !== 'Success') {
    throw new Error(`Milvus could not ${what}: ${status.reason || status.error_code}`);
  }
  return res;
}

async function prepare({ endpoint, corpus }) {
  await close();
  store.client = new MilvusClient({ address: endpoint.uri, token: endpoint.token || undefined, database: endpoint.dbName || undefined });
  store.collection = `${endpoint.collectionPrefix}node_${corpus.name}`.replace(/[^A-Za-z0-9_]/g, '_');
  const name = store.collection;
  const has = await store.client.hasCollection({ collection_name: name });
  if (has.value) await check(store.client.dropCollection({ collection_name: name }), 'drop a stale collection');
  await check(store.client.createCollection({
    collection_name: name,
    consistency_level: 'Strong', // a search right after the insert must see it
    fields: [
      { name: 'evidence_key', data_type: DataType.VarChar, is_primary_key: true, max_length: 1024 },
      { name: 'doc_id', data_type: DataType.VarChar, max_length: 1000 },
      { name: 'chunk_index', data_type: DataType.Int64 },
      { name: 'text', data_type: DataType.VarChar, max_length: 65535, enable_analyzer: true, analyzer_params: { type: 'standard' } },
      { name: 'dense', data_type: DataType.FloatVector, dim: corpus.dim },
      { name: 'sparse', data_type: DataType.SparseFloatVector },
      { name: 'category', data_type: DataType.VarChar, max_length: 512, nullable: true },
      { name: 'source_type', data_type: DataType.VarChar, max_length: 512, nullable: true },
    ],
    functions: [{ name: 'text_bm25', type: FunctionType.BM25, input_field_names: ['text'], output_field_names: ['sparse'], params: {} }],
    index_params: [
      { field_name: 'dense', index_type: 'FLAT', metric_type: 'L2' },
      { field_name: 'sparse', index_type: 'SPARSE_INVERTED_INDEX', metric_type: 'BM25' },
    ],
  }), 'create the collection');
  const rows = corpus.chunks.map((c) => ({
    evidence_key: `${c.docId}#${c.chunkIndex}`, doc_id: c.docId, chunk_index: c.chunkIndex, text: c.text,
    dense: c.vector, category: c.category ?? null, source_type: c.sourceType ?? null,
  }));
  await check(store.client.insert({ collection_name: name, data: rows }), 'insert the corpus');
  await check(store.client.loadCollection({ collection_name: name }), 'load the collection');
  return null;
}

// Squared L2 in float32, as Milvus computes it, from the vector the hybrid search returned.
function squaredL2(stored, query) {
  let sum = 0;
  for (let i = 0; i < query.length; i++) {
    const d = Math.fround(Math.fround(stored[i]) - Math.fround(query[i]));
    sum = Math.fround(sum + Math.fround(d * d));
  }
  return sum;
}

function filterFor(category) {
  return category == null ? '' : `category == ${JSON.stringify(category)}`;
}

// One engine search per query: dense ANN only in dense mode; one hybridSearch (dense + BM25, RRF) in hybrid mode.
async function search({ queryText, queryVector, mode, k, category = null, rrfK = 60 }) {
  if (!store.client) throw new Error('search before prepare');
  const expr = filterFor(category);
  if (mode === 'dense') {
    const res = await check(store.client.search({
      collection_name: store.collection, data: queryVector, anns_field: 'dense', limit: k,
      filter: expr, output_fields: OUTPUT, metric_type: 'L2', params: {},
    }), 'run the dense search');
    return res.results.map((hit, i) => toHit(hit, i + 1, 'dense', null));
  }
  // Each sub-request needs its own metric, limit and filter (the SDK's default limit is not k).
  const requests = [{ data: queryVector, anns_field: 'dense', metric_type: 'L2', limit: k, params: {}, expr }];
  if (queryText.trim()) {
    // A blank query has no term for BM25; leave that sub-request out rather than send it empty.
    requests.push({ data: queryText, anns_field: 'sparse', metric_type: 'BM25', limit: k, params: {}, expr });
  }
  const res = await check(store.client.hybridSearch({
    collection_name: store.collection, data: requests, rerank: RRFRanker(rrfK), limit: k,
    output_fields: [...OUTPUT, 'dense'],
  }), 'run the hybrid search');
  return res.results.map((hit, i) => toHit(hit, i + 1, 'hybrid', squaredL2(hit.dense, queryVector)));
}

function toHit(hit, rank, label, denseDistance) {
  return {
    docId: hit.doc_id, chunkIndex: Number(hit.chunk_index), originalRank: rank, score: hit.score,
    scoreLabel: label, rawScore: hit.score, denseDistance,
    text: hit.text, category: hit.category ?? null, sourceType: hit.source_type ?? null,
  };
}

// Search, post-process, and the category retry: exactly one unfiltered retry when the filtered result is low quality.
async function lookup(r) {
  const attempt = async (category) => {
    const hits = await search({ queryText: r.queryText, queryVector: r.queryVector, mode: r.mode ?? 'hybrid', k: r.retrieveK ?? 20, category, rrfK: r.rrfK ?? 60 });
    return postProcess({ candidates: hits, hints: r.hints, config: r.config });
  };
  if (r.category == null) return { ...(await attempt(null)), path: 'unfiltered' };
  const filtered = await attempt(r.category);
  if (!filtered.isLowQuality) return { ...filtered, path: 'filtered' };
  return { ...(await attempt(null)), path: 'unfiltered_retry' };
}

async function close() {
  if (!store.client) return;
  const { client, collection } = store;
  store.client = null;
  try {
    await client.dropCollection({ collection_name: collection });
  } finally {
    await client.closeConnection();
  }
}

// -- the protocol loop --------------------------------------------------------------------------

const HANDLERS = {
  start: () => ({
    name: 'node-example', version: '0.1.0', language: 'javascript',
    homepage: 'https://www.npmjs.com/package/@zilliz/milvus2-sdk-node',
    capabilities: ['labels', 'quality', 'post_process', 'search', 'lookup'],
  }),
  canonicalize_label: (m) => canonicalize(m.label),
  quality_score: ({ request: r }) => quality(r.scoreLabel, r.score ?? null, r.originalRank ?? 1, r.batchSize ?? 1, r.maxL2Distance ?? 2, r.denseDistance ?? null),
  post_process: (m) => postProcess(m.request),
  prepare: (m) => prepare(m),
  search: async (m) => ({ hits: (await search(m.request)).map(({ text, category, sourceType, ...hit }) => hit) }),
  lookup: (m) => lookup(m.request),
  stop: async () => { await close(); return null; },
};

async function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const message = JSON.parse(line);
    let reply;
    try {
      const handler = HANDLERS[message.type];
      reply = handler
        ? { seq: message.seq, result: await handler(message) }
        : { seq: message.seq, skipped: `no handler for ${message.type}` };
    } catch (err) {
      reply = { seq: message.seq, error: { message: String(err.message || err), kind: err.name, context: err.stack } };
    }
    await new Promise((resolve) => protocolWrite(`${JSON.stringify(reply)}\n`, resolve));
    if (message.type === 'stop') break;
  }
  process.exit(0); // the gRPC client may hold the event loop open
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
