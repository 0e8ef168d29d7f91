#!/usr/bin/env node
// The bug report's eachBatch cache-expiry scenario at 1/100 scale, run against the real
// confluent-kafka-javascript client (kafkajs-compat API), to capture its logs as fixtures for
// kstranded's trace parser, and run by `kstranded repro --real-client` (embedded in the
// binary, package jsclient). See testenv/jsclient/README.md.
//
//   node scenario.js --brokers 127.0.0.1:PORT --logger default|json [--debug CONTEXTS]
//                    [--module PATH] [--records 200] [--quiet-ms 10000] [--phase2-wait-ms 10000]
//
// Shapes (the agreement suite, integration/jsclient_test.go; defaults are the seed's):
//   [--spread PxN | P:N,...] (records per partition, in one transaction; default 0:--records)
//   [--handler eachBatch|eachMessage] [--concurrency 20] [--parallel 3] [--delay-ms 400]
//   [--max-poll-ms 9000] [--batch-size 20] [--commit auto|manual|explicit]
// --commit manual is upstream #476's idiom: autoCommit false, eachBatchAutoResolve false,
// resolveOffset() per record, await commitOffsetsIfNecessary() at the end of each batch.
// --commit explicit: autoCommit false, and the handler names the offset it commits, await
// consumer.commitOffsets([{topic, partition, offset: last + 1}]): eachBatch at the end of
// each batch (otherwise as manual: eachBatchAutoResolve false, resolveOffset() per record),
// eachMessage after each message (kstranded simulate --commit explicit).
//   [--pause-at-ms MS] [--resume-after-ms 500] [--pause-from handler|outside]
//   [--cache-size-per-worker-ms MS] (js.consumer.max.cache.size.per.worker.ms; default: the client's 1500)
// --pause-at-ms: the handler calls its payload's pause() once, at its first round (eachBatch)
// or message (eachMessage) starting MS or more after consumer.run(), goes on with its batch,
// and calls the function pause() returned --resume-after-ms later (upstream #517; kstranded
// simulate --pause-at / --resume-after, times 100). With --pause-from outside the application
// calls consumer.pause([{topic}]) from a timer MS after consumer.run() instead, whatever the
// handler is doing, and the function it returned --resume-after-ms later (simulate
// --pause-from outside).
//   [--members N] [--rebalance-at MS:join|MS:leave|MS:leave=N ...] [--group-protocol classic|consumer]
//   [--pause-partitions P,P,...] (with --pause-from outside)
// --pause-partitions: the application pauses only those partitions,
// consumer.pause([{topic, partitions: [P, ...]}]), and the function it returned resumes the
// same ones (simulate --pause-partitions).
//   [--join-at-ms MS] [--leave-at-ms MS] [--leave m1|m2]
// --members N: N consumers of the group (m1..mN, in this process, the same settings and
// handler) connect and subscribe together and run one after the other, m1 first.
// --rebalance-at (repeatable, kstranded simulate's steps with times in ms at this scale,
// from m1's run()): MS:join starts one more member (the next mN); MS:leave=N makes mN call
// disconnect() (its batch in flight finishes first), MS:leave the most recently started
// member still in the group. --join-at-ms MS is MS:join; --leave-at-ms MS with --leave mN
// (default m1) is MS:leave=N. Each member's client.id is kstranded-mN, so that the
// broker's member ids (client.id-uuid) order the members as they started and the
// roundrobin assignor deals partition 0 to m1 (kstranded simulate --rebalance-at, which
// deals in join order; mN for N > 9 would sort before m2). With two members or more every
// delivery, pause, resume and seek line names its member (member=mN). Each member is its
// own copy of the application, as each member of the model is: --pause-at-ms,
// --seek-at-ms and --seek count from that member's own run(), and each member pauses
// (from its handler or from outside, its own assignment) and seeks once for itself.
// --group-protocol consumer: group.protocol=consumer (KIP-848) for every member; the
// client then refuses the kafkaJS sessionTimeout and heartbeatInterval (the broker owns
// them) and sets no assignor (the broker's).
//   [--seek-at-ms MS --seek-to OFFSET] [--heartbeat] [--auto-resolve true|false]
// --seek-at-ms: the handler calls consumer.seek({topic, partition, offset: OFFSET}) on its own
// partition once, at its first round (eachBatch) or message (eachMessage) starting MS or more
// after consumer.run(), and goes on with its batch (simulate --seek-at / --seek-to).
//   [--seek [P:]OFFSET@MS]... (repeatable)
// --seek: one more consumer.seek({topic, partition: P, offset: OFFSET}) from the handler, at
// its first round (message) starting MS or more after consumer.run(), of partition P (default:
// the partition it is handling), once; several due at one round are called in the order given
// (simulate --seek P:OFFSET@TIME, times 100).
// --heartbeat: the eachBatch handler awaits its payload's heartbeat() after every round
// (simulate --heartbeat). --auto-resolve false: eachBatchAutoResolve false and the kafkajs
// idiom `if (!isRunning() || isStale()) break;` before each round, resolveOffset() of the
// round's last record after it (simulate --auto-resolve=false). Without it (and without
// --commit manual) the handler checks neither isStale() nor isRunning(): it finishes its batch.
//
// Phase 1: a transactional producer (acks -1) writes --records records to partition 0 of
// --topic in one transaction; a consumer (the bug report's settings, durations / 100) delivers
// them through a slow eachBatch (3 records at a time, 400 ms each). Once no record has been
// delivered for --quiet-ms (or every record was, each counted once), the group's committed offset is printed.
// Phase 2: one more record is produced (not transactional), the run waits --phase2-wait-ms
// after its delivery for auto-commit, prints the committed offset again and disconnects.
//
// Everything goes to stdout/stderr as the client and the application print it; nothing is
// post-processed.
'use strict';

const os = require('os');
const path = require('path');
const crypto = require('crypto');

function parseArgs(argv) {
  const opts = {
    brokers: '',
    logger: 'default',
    debug: 'consumer,cgrp,fetch,topic',
    module: '@confluentinc/kafka-javascript',
    topic: 'stranded',
    records: 200,
    quietMs: 10000,
    phase2WaitMs: 10000,
    group: '',
    spread: '',
    handler: 'eachBatch',
    concurrency: 20,
    parallel: 3,
    delayMs: 400,
    maxPollMs: 9000,
    batchSize: 20,
    commit: 'auto',
    pauseAtMs: 0,
    resumeAfterMs: 500,
    joinAtMs: -1,
    leaveAtMs: -1,
    leave: 'm1',
    members: 1,
    rebalance: [], // --rebalance-at: {at, join} or {at, member} (member 0: the latest still in)
    groupProtocol: 'classic',
    pauseFrom: 'handler',
    pausePartitions: null,
    seekAtMs: 0,
    seekTo: -1,
    seeks: [],
    heartbeat: false,
    autoResolve: true,
    cacheSizePerWorkerMs: 0, // 0: the client's default (1500 ms, unscaled)
  };
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    switch (a) {
      case '--brokers': opts.brokers = val(); break;
      case '--logger': opts.logger = val(); break;
      case '--debug': opts.debug = val(); break;
      case '--module': opts.module = val(); break;
      case '--topic': opts.topic = val(); break;
      case '--records': opts.records = Number(val()); break;
      case '--quiet-ms': opts.quietMs = Number(val()); break;
      case '--phase2-wait-ms': opts.phase2WaitMs = Number(val()); break;
      case '--group': opts.group = val(); break;
      case '--spread': opts.spread = val(); break;
      case '--handler': opts.handler = val(); break;
      case '--concurrency': opts.concurrency = Number(val()); break;
      case '--parallel': opts.parallel = Number(val()); break;
      case '--delay-ms': opts.delayMs = Number(val()); break;
      case '--max-poll-ms': opts.maxPollMs = Number(val()); break;
      case '--batch-size': opts.batchSize = Number(val()); break;
      case '--commit': opts.commit = val(); break;
      case '--pause-at-ms': opts.pauseAtMs = Number(val()); break;
      case '--resume-after-ms': opts.resumeAfterMs = Number(val()); break;
      case '--join-at-ms': opts.joinAtMs = Number(val()); break;
      case '--leave-at-ms': opts.leaveAtMs = Number(val()); break;
      case '--leave': opts.leave = val(); break;
      case '--members': opts.members = Number(val()); break;
      case '--rebalance-at': opts.rebalance.push(parseStep(val())); break;
      case '--group-protocol': opts.groupProtocol = val(); break;
      case '--pause-from': opts.pauseFrom = val(); break;
      case '--pause-partitions': opts.pausePartitions = val().split(',').map(Number); break;
      case '--seek-at-ms': opts.seekAtMs = Number(val()); break;
      case '--seek-to': opts.seekTo = Number(val()); break;
      case '--seek': {
        const m = /^(?:(\d+):)?(\d+)@(\d+)$/.exec(val());
        if (!m) throw new Error('--seek wants [P:]OFFSET@MS');
        opts.seeks.push({ partition: m[1] === undefined ? null : Number(m[1]), offset: Number(m[2]), atMs: Number(m[3]) });
        break;
      }
      case '--heartbeat': opts.heartbeat = true; break;
      case '--auto-resolve': opts.autoResolve = val() !== 'false'; break;
      case '--cache-size-per-worker-ms': opts.cacheSizePerWorkerMs = Number(val()); break;
      default: throw new Error(`unknown argument ${a}`);
    }
  }
  if (!opts.brokers) throw new Error('--brokers host:port is required');
  if (opts.logger !== 'default' && opts.logger !== 'json')
    throw new Error('--logger must be default or json');
  if (opts.handler !== 'eachBatch' && opts.handler !== 'eachMessage')
    throw new Error('--handler must be eachBatch or eachMessage');
  if (opts.commit !== 'auto' && opts.commit !== 'manual' && opts.commit !== 'explicit')
    throw new Error('--commit must be auto, manual or explicit');
  if (opts.pauseFrom !== 'handler' && opts.pauseFrom !== 'outside')
    throw new Error('--pause-from must be handler or outside');
  if (opts.pausePartitions && (opts.pauseFrom !== 'outside' ||
      !opts.pausePartitions.every((p) => Number.isInteger(p) && p >= 0)))
    throw new Error('--pause-partitions P,P,... (partitions >= 0) needs --pause-from outside');
  if (!Number.isInteger(opts.members) || opts.members < 1)
    throw new Error('--members must be a whole number >= 1');
  if (opts.groupProtocol !== 'classic' && opts.groupProtocol !== 'consumer')
    throw new Error('--group-protocol must be classic or consumer');
  const lm = /^m(\d+)$/.exec(opts.leave);
  if (!lm || Number(lm[1]) < 1) throw new Error('--leave must name a member, m1, m2, ...');
  // --join-at-ms's, --leave-at-ms's, then --rebalance-at's, in time order (a stable
  // sort: steps at one time keep this order; jsclient.Shape's steps() is the same)
  opts.steps = [];
  if (opts.joinAtMs >= 0) opts.steps.push({ at: opts.joinAtMs, join: true });
  if (opts.leaveAtMs >= 0) opts.steps.push({ at: opts.leaveAtMs, member: Number(lm[1]) });
  opts.steps.push(...opts.rebalance);
  opts.steps.sort((a, b) => a.at - b.at);
  opts.plan = planMembers(opts.members, opts.steps);
  if (opts.seekAtMs > 0 && !(Number.isInteger(opts.seekTo) && opts.seekTo >= 0))
    throw new Error('--seek-at-ms needs --seek-to OFFSET (>= 0)');
  if (!opts.autoResolve && opts.commit !== 'auto')
    throw new Error('--auto-resolve false is the auto-commit resolving handler; --commit manual and explicit have their own');
  // records per partition: PxN (N on each of 0..P-1) or P:N,...
  opts.parts = new Map();
  const spread = opts.spread || `0:${opts.records}`;
  let m;
  if ((m = /^(\d+)x(\d+)$/.exec(spread))) {
    for (let p = 0; p < Number(m[1]); p++) opts.parts.set(p, Number(m[2]));
  } else {
    for (const part of spread.split(',')) {
      const [p, n] = part.split(':').map(Number);
      if (!Number.isInteger(p) || !Number.isInteger(n)) throw new Error(`--spread ${spread}: PxN or P:N,...`);
      opts.parts.set(p, n);
    }
  }
  opts.total = [...opts.parts.values()].reduce((a, b) => a + b, 0);
  return opts;
}

// parseStep reads a --rebalance-at step: MS:join, MS:leave or MS:leave=N.
function parseStep(v) {
  const m = /^(\d+):(join|leave(?:=(\d+))?)$/.exec(v);
  if (!m) throw new Error(`--rebalance-at ${v}: want MS:join, MS:leave or MS:leave=N`);
  if (m[2] === 'join') return { at: Number(m[1]), join: true };
  return { at: Number(m[1]), member: m[3] === undefined ? 0 : Number(m[3]) };
}

// planMembers names the member each step starts or stops, in time order, and checks that
// a member leaving is in the group then and that one always stays (as simulate does).
function planMembers(initial, steps) {
  const inGroup = [];
  for (let i = 1; i <= initial; i++) inGroup.push(i);
  let next = initial + 1;
  const plan = [];
  for (const st of steps) {
    if (st.join) {
      inGroup.push(next);
      plan.push({ at: st.at, join: true, member: `m${next++}` });
      continue;
    }
    const n = st.member || inGroup[inGroup.length - 1];
    const i = inGroup.indexOf(n);
    if (i < 0) throw new Error(`leave of m${n} at ${st.at} ms: m${n} is not in the group then (needs a second member: --members or a join)`);
    inGroup.splice(i, 1);
    if (inGroup.length === 0) throw new Error(`leave of m${n} at ${st.at} ms: the last member would leave (needs a second member)`);
    plan.push({ at: st.at, join: false, member: `m${n}` });
  }
  return { initial, steps: plan, total: next - 1 };
}

const opts = parseArgs(process.argv);

// --module: a package name (found through NODE_PATH, as kstranded runs it) or a path
// (relative to the working directory: kstranded carries this file embedded and runs it
// from a temporary copy) to a kafka-javascript install.
const modPath = opts.module.startsWith('.') || opts.module.startsWith('/')
  ? path.resolve(opts.module) : opts.module;
const ckjs = require(modPath);
const ckjsVersion = require(path.join(
  path.dirname(require.resolve(path.join(modPath, 'package.json'))), 'package.json')).version;
const { Kafka, logLevel } = ckjs.KafkaJS;

// ---------------------------------------------------------------------------------------
// Variant B: a pino-shaped JSON logger (one object per line on stdout).
// pino levels: 10 trace, 20 debug, 30 info, 40 warn, 50 error.
const HOSTNAME = 'capture';
class JsonLogger {
  constructor(bindings = {}) {
    this.bindings = bindings;
    this.level = logLevel.INFO;
  }
  setLogLevel(l) { this.level = l; }
  namespace(ns, l) {
    const child = new JsonLogger({ ...this.bindings, namespace: ns });
    child.level = l !== undefined ? l : this.level;
    return child;
  }
  #write(pinoLevel, message, extra) {
    const line = { level: pinoLevel, time: Date.now(), pid: process.pid, hostname: HOSTNAME,
      ...this.bindings, ...extra, msg: String(message) };
    process.stdout.write(JSON.stringify(line) + '\n');
  }
  error(m, e) { if (this.level >= logLevel.ERROR) this.#write(50, m, e); }
  warn(m, e) { if (this.level >= logLevel.WARN) this.#write(40, m, e); }
  info(m, e) { if (this.level >= logLevel.INFO) this.#write(30, m, e); }
  debug(m, e) { if (this.level >= logLevel.DEBUG) this.#write(20, m, e); }
}
const appLog = new JsonLogger({ name: 'scenario' });
appLog.setLogLevel(logLevel.INFO);

// Application output: plain `key=value` lines in the default variant, JSON in the json one.
function app(msg, fields = {}) {
  if (opts.logger === 'json') {
    appLog.info(msg, fields);
  } else {
    const kv = Object.entries(fields).map(([k, v]) =>
      `${k}=${Array.isArray(v) ? v.join(',') : v}`).join(' ');
    console.log(kv ? `${msg} ${kv}` : msg);
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const runId = crypto.randomBytes(4).toString('hex');
const groupId = opts.group || `kstranded-js-${ckjsVersion}-${opts.logger}-${runId}`;
const brokers = opts.brokers.split(',');

// Each client gets its own logger object in the json variant: the consumer calls
// setLogLevel on it, which must not change the producer's or the admin's level.
function clientLogger() {
  return opts.logger === 'json' ? { logger: new JsonLogger() } : {};
}

// The application's Kafka instance (default logger at DEBUG in both variants).
const kafka = new Kafka({ kafkaJS: { brokers, logLevel: logLevel.DEBUG } });
// Measurement only (committed offsets, watermarks): errors only, so it adds no noise.
const probeKafka = new Kafka({ kafkaJS: { brokers, logLevel: logLevel.ERROR } });

async function produceTransactional() {
  const producer = kafka.producer({
    kafkaJS: { transactionalId: `kstranded-js-tx-${runId}`, acks: -1, idempotent: true,
      ...clientLogger() },
  });
  await producer.connect();
  const tx = await producer.transaction();
  const messages = [];
  for (const [p, n] of opts.parts)
    for (let i = 0; i < n; i++) messages.push({ partition: p, key: `k${i}`, value: `record-${i}` });
  await tx.send({ topic: opts.topic, messages });
  await tx.commit();
  await producer.disconnect();
}

// Phase 2: one more record (not transactional) on every partition that holds records.
async function producePhase2() {
  const producer = kafka.producer({ kafkaJS: { acks: -1, idempotent: true, ...clientLogger() } });
  await producer.connect();
  const messages = [...opts.parts.entries()].map(([p, n]) => ({ partition: p, key: `k${n}`, value: `record-${n}` }));
  await producer.send({ topic: opts.topic, messages });
  await producer.disconnect();
}

// adminOffsets reads the group's committed offsets and the watermarks with the KafkaJS
// admin client (0.4.0 and later).
async function adminOffsets(admin) {
  const [committed] = await admin.fetchOffsets({ groupId, topics: [opts.topic] });
  const wms = await admin.fetchTopicOffsets(opts.topic);
  return { committed, wms };
}

// rdkafkaOffsets reads them where the KafkaJS admin has no fetchOffsets or
// fetchTopicOffsets (0.2.0 to 0.3.0): a KafkaConsumer of the node-rdkafka API in the
// group, never subscribed (it does not join the group), asks committed() and
// queryWatermarkOffsets().
async function rdkafkaOffsets() {
  const c = new ckjs.KafkaConsumer({ 'metadata.broker.list': brokers.join(','), 'group.id': groupId,
    'enable.auto.commit': false }, {});
  const call = (f) => new Promise((resolve, reject) => f((err, v) => (err ? reject(err) : resolve(v))));
  await call((cb) => c.connect({ timeout: 10000 }, cb));
  try {
    const parts = [...opts.parts.keys()].sort((a, b) => a - b);
    const offs = await call((cb) => c.committed(parts.map((p) => ({ topic: opts.topic, partition: p })), 10000, cb));
    const wms = [];
    for (const p of parts) {
      const w = await call((cb) => c.queryWatermarkOffsets(opts.topic, p, 10000, cb));
      wms.push({ partition: p, low: String(w.lowOffset), high: String(w.highOffset) });
    }
    // committed() gives -1001 (RD_KAFKA_OFFSET_INVALID) where the group has no offset;
    // fetchOffsets gives -1.
    return { committed: { partitions: offs.map((o) => ({ partition: o.partition, offset: String(o.offset < 0 ? -1 : o.offset) })) }, wms };
  } finally {
    await call((cb) => c.disconnect(cb));
  }
}

// probe prints the group's committed offset of every partition that holds records and
// returns partition 0's (the seed's).
async function probe(admin, phase) {
  const { committed, wms } = admin.fetchOffsets && admin.fetchTopicOffsets ? await adminOffsets(admin) : await rdkafkaOffsets();
  let first = -1;
  for (const p of [...opts.parts.keys()].sort((a, b) => a - b)) {
    const c = committed.partitions.find((x) => x.partition === p);
    const wm = wms.find((x) => x.partition === p);
    const committedOffset = Number(c ? c.offset : -1);
    app('committed', { phase, topic: opts.topic, partition: p, offset: String(committedOffset),
      low: wm.low, high: wm.high });
    if (first === -1) first = committedOffset;
  }
  return first;
}

async function main() {
  app('scenario', { client: ckjsVersion, librdkafka: ckjs.librdkafkaVersion, node: process.version,
    logger: opts.logger, debug: opts.debug || '-', group: groupId, topic: opts.topic,
    records: opts.total, ...(opts.spread ? { spread: opts.spread, handler: opts.handler,
      concurrency: opts.concurrency, parallel: opts.parallel, delay_ms: opts.delayMs,
      max_poll_ms: opts.maxPollMs, batch_size: opts.batchSize, commit: opts.commit } : {}),
    ...(opts.pauseAtMs > 0 ? { pause_at_ms: opts.pauseAtMs, resume_after_ms: opts.resumeAfterMs,
      pause_from: opts.pauseFrom, ...(opts.pausePartitions ? { pause_partitions: opts.pausePartitions.join(',') } : {}) } : {}),
    ...(opts.plan.total > 1 ? { members: opts.members,
      rebalance_at: opts.plan.steps.map((s) => `${s.at}:${s.join ? 'join' : 'leave'}:${s.member}`).join(',') || '-' } : {}),
    ...(opts.groupProtocol !== 'classic' ? { group_protocol: opts.groupProtocol } : {}),
    ...(opts.seekAtMs > 0 ? { seek_at_ms: opts.seekAtMs, seek_to: opts.seekTo } : {}),
    ...(opts.seeks.length ? { seeks: opts.seeks.map((k) => `${k.partition === null ? '' : k.partition + ':'}${k.offset}@${k.atMs}`).join(',') } : {}),
    ...(opts.heartbeat ? { heartbeat: true } : {}),
    ...(opts.autoResolve ? {} : { auto_resolve: false }) });

  const admin = probeKafka.admin();
  await admin.connect();

  await produceTransactional();
  for (const [p, n] of opts.parts)
    app('produced', { phase: 1, topic: opts.topic, partition: p, count: n, transactional: true });

  const delivered = [];
  const distinct = new Set(); // partition:offset, once each: with members, a record can come twice
  let lastDeliveryAt = Date.now();
  const many = opts.plan.total > 1;
  const classic = opts.groupProtocol === 'classic';
  const deliver = (member, topic, partition, offset) => {
    delivered.push(`${partition}:${offset}`);
    distinct.add(`${partition}:${offset}`);
    lastDeliveryAt = Date.now();
    if (opts.logger === 'json')
      appLog.info('delivered', { topic, partition, offset, ...(many ? { member } : {}) });
    else
      console.log(`delivered topic=${topic} partition=${partition} offset=${offset}${many ? ` member=${member}` : ''}`);
  };
  // Each member is its own copy of the application (as every member of the model and of
  // the live repro is): its pause and seeks are due --pause-at-ms / --seek-at-ms after its
  // own run(), once each for that member; at_ms is from m1's run(), as every app line.
  let runStartedAt = 0;
  const members = new Map(); // member -> { startedAt, pauseDone, seekDone, seeksLeft }
  const memberState = (member) => {
    if (!members.has(member))
      members.set(member, { startedAt: Date.now(), pauseDone: false, seekDone: false, seeksLeft: [...opts.seeks] });
    return members.get(member);
  };
  const who = (member) => (many ? { member } : {});
  // --pause-at-ms: pause() once from the payload when due, resume() --resume-after-ms later
  // (not by a member that has left by then: the client's resume() throws once it is
  // disconnected, where the model's resume of a stopped member does nothing)
  const maybePause = (member, consumer, pause, topic, partition) => {
    const ms = memberState(member);
    if (opts.pauseAtMs <= 0 || opts.pauseFrom !== 'handler' || ms.pauseDone || Date.now() - ms.startedAt < opts.pauseAtMs) return;
    ms.pauseDone = true;
    app('pause', { topic, partition, at_ms: Date.now() - runStartedAt, ...who(member) });
    const resume = pause();
    setTimeout(() => {
      if (consumers.get(member) !== consumer) return;
      app('resume', { topic, partition, at_ms: Date.now() - runStartedAt, ...who(member) });
      resume();
    }, opts.resumeAfterMs);
  };

  // --seek-at-ms: consumer.seek() of the handler's own partition once, when due
  const maybeSeek = (member, consumer, topic, partition) => {
    const ms = memberState(member);
    const now = Date.now() - runStartedAt;
    const own = Date.now() - ms.startedAt;
    if (opts.seekAtMs > 0 && !ms.seekDone && own >= opts.seekAtMs) {
      ms.seekDone = true;
      app('seek', { topic, partition, offset: opts.seekTo, at_ms: now, ...who(member) });
      consumer.seek({ topic, partition, offset: String(opts.seekTo) });
    }
    // --seek: each once, when due, of its partition or the handler's own
    const seeksLeft = ms.seeksLeft;
    for (let i = 0; i < seeksLeft.length;) {
      const k = seeksLeft[i];
      if (own < k.atMs) { i++; continue; }
      seeksLeft.splice(i, 1);
      const p = k.partition === null ? partition : k.partition;
      app('seek', { topic, partition: p, offset: k.offset, at_ms: now, handler_partition: partition, ...who(member) });
      consumer.seek({ topic, partition: p, offset: String(k.offset) });
    }
  };

  // connectMember connects and subscribes one consumer of the group (m1..mN, and one more
  // at each join step), each with the same settings; runMember runs it with the handler.
  const connectMember = async (member) => {
    const consumerConfig = {
      kafkaJS: {
        groupId,
        fromBeginning: true,
        autoCommit: opts.commit === 'auto',
        readUncommitted: false,
        // the consumer protocol refuses these (the broker owns them, _consumer.js
        // #kafkaJSToConsumerConfig)
        ...(classic ? { sessionTimeout: 6000, heartbeatInterval: 1500 } : {}),
        maxBytes: 8192,
        maxBytesPerPartition: 8192,
        ...clientLogger(),
      },
      'max.poll.interval.ms': opts.maxPollMs, // the report's 900000 / 100
      'js.consumer.max.batch.size': opts.batchSize,
      'fetch.wait.max.ms': 50, // the report's 5000; kfake answers an idle fetch only at its max wait
      'enable.metrics.push': false,
    };
    // js.consumer.max.cache.size.per.worker.ms (1.7.0 and later) only when given: the
    // default 1500 ms is not scaled (jsclient.Shape.CacheSizePerWorker).
    if (opts.cacheSizePerWorkerMs > 0)
      consumerConfig['js.consumer.max.cache.size.per.worker.ms'] = opts.cacheSizePerWorkerMs;
    // Before 1.7.0 the client reads neither js.consumer.* property (eachBatch gets batches
    // of 32, `const maxBatchSize = 32` in #runInternal) and hands them to librdkafka, which
    // refuses an unknown property: they are left out (the model of those releases batches
    // 32 too, eachbatch.V1_6_0).
    // (0.2.x's package.json spells its version "v0.2.1")
    const [major, minor] = ckjsVersion.replace(/^v/, '').split('.').map(Number);
    if (major < 1 || (major === 1 && minor < 7)) {
      delete consumerConfig['js.consumer.max.batch.size'];
      delete consumerConfig['js.consumer.max.cache.size.per.worker.ms'];
    }
    // member ids are client.id-uuid: kstranded-m1 < kstranded-m2 orders the members for
    // the roundrobin assignor as they started
    if (many) consumerConfig['client.id'] = `kstranded-${member}`;
    if (!classic) consumerConfig['group.protocol'] = opts.groupProtocol;
    if (opts.debug) consumerConfig.debug = opts.debug;
    const consumer = kafka.consumer(consumerConfig);
    await consumer.connect();
    await consumer.subscribe({ topic: opts.topic });
    return consumer;
  };
  const runMember = (member, consumer) => {
    const run = { partitionsConsumedConcurrently: opts.concurrency };
    if (opts.handler === 'eachMessage') {
      run.eachMessage = async ({ topic, partition, message, pause }) => {
        maybePause(member, consumer, pause, topic, partition);
        maybeSeek(member, consumer, topic, partition);
        await sleep(opts.delayMs);
        deliver(member, topic, partition, message.offset);
        if (opts.commit === 'explicit')
          await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
      };
    } else {
      const manual = opts.commit === 'manual' || opts.commit === 'explicit';
      if (manual || !opts.autoResolve) run.eachBatchAutoResolve = false;
      run.eachBatch = async ({ batch, resolveOffset, commitOffsetsIfNecessary, pause, heartbeat, isRunning, isStale }) => {
        // --parallel records at a time, --delay-ms each (the report's 3 and 40 s / 100).
        for (let i = 0; i < batch.messages.length; i += opts.parallel) {
          if (!opts.autoResolve && (!isRunning() || isStale())) break;
          maybePause(member, consumer, pause, batch.topic, batch.partition);
          maybeSeek(member, consumer, batch.topic, batch.partition);
          const round = batch.messages.slice(i, i + opts.parallel);
          await Promise.all(round.map(async (m) => {
            await sleep(opts.delayMs);
            deliver(member, batch.topic, batch.partition, m.offset);
          }));
          if (manual) for (const m of round) resolveOffset(m.offset);
          if (!opts.autoResolve) resolveOffset(round[round.length - 1].offset);
          if (opts.heartbeat) await heartbeat();
        }
        if (opts.commit === 'manual') await commitOffsetsIfNecessary();
        if (opts.commit === 'explicit') {
          const last = batch.messages[batch.messages.length - 1];
          await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition,
            offset: String(Number(last.offset) + 1) }]);
        }
      };
    }
    if (member === 'm1') runStartedAt = Date.now();
    memberState(member).startedAt = Date.now();
    consumer.run(run);
    if (many) app('member', { member, event: 'run', at_ms: Date.now() - runStartedAt });
    if (opts.pauseAtMs > 0 && opts.pauseFrom === 'outside') pauseFromOutside(member, consumer);
    return consumer;
  };
  // --pause-from outside: the application pauses the topic from a timer --pause-at-ms after
  // the member's run(), whatever the handler is doing (every partition the member is
  // assigned: consumer.pause with no partitions; with --pause-partitions, those partitions
  // only), and resumes them --resume-after-ms later; not a member that has left by then
  const pauseFromOutside = (member, consumer) => {
    const connected = () => consumers.get(member) === consumer;
    setTimeout(() => {
      if (!connected()) return;
      const toppar = { topic: opts.topic };
      if (opts.pausePartitions) toppar.partitions = opts.pausePartitions;
      const resume = consumer.pause([toppar]);
      app('pause', { topic: opts.topic, from: 'outside', at_ms: Date.now() - runStartedAt,
        ...(opts.pausePartitions ? { partitions: opts.pausePartitions.join(',') } : {}),
        assigned: consumer.assignment().map((tp) => tp.partition).join(',') || '-', ...who(member) });
      setTimeout(() => {
        if (!connected()) return;
        app('resume', { topic: opts.topic, from: 'outside', at_ms: Date.now() - runStartedAt, ...who(member) });
        if (resume) resume();
      }, opts.resumeAfterMs);
    }, opts.pauseAtMs);
  };

  const consumers = new Map(); // member -> consumer, while connected
  // --members N: connected and subscribed together, then run m1 first
  const initial = [];
  for (let i = 1; i <= opts.plan.initial; i++) initial.push(`m${i}`);
  const connected = await Promise.all(initial.map((m) => connectMember(m)));
  initial.forEach((m, i) => consumers.set(m, runMember(m, connected[i])));
  // --rebalance-at: each step at its time from m1's run(); a leave waits for its member
  // to have started (a join just before it may still be connecting)
  const started = new Map(initial.map((m) => [m, Promise.resolve()]));
  const timers = opts.plan.steps.map((st) => sleep(Math.max(0, runStartedAt + st.at - Date.now())).then(async () => {
    if (st.join) {
      let done;
      started.set(st.member, new Promise((r) => { done = r; }));
      app('member', { member: st.member, event: 'join', at_ms: Date.now() - runStartedAt });
      consumers.set(st.member, runMember(st.member, await connectMember(st.member)));
      done();
      return;
    }
    while (!started.has(st.member)) await sleep(50);
    await started.get(st.member);
    const c = consumers.get(st.member);
    consumers.delete(st.member);
    app('member', { member: st.member, event: 'leave', at_ms: Date.now() - runStartedAt });
    await c.disconnect();
    app('member', { member: st.member, event: 'left', at_ms: Date.now() - runStartedAt });
  }));
  // Phase 1: wait until everything was delivered or nothing was for --quiet-ms.
  // Every record counted once: duplicates (a new owner starting below what the old one
  // delivered) must not end phase 1 while records are still to come.
  while (distinct.size < opts.total && Date.now() - lastDeliveryAt < opts.quietMs)
    await sleep(200);
  if (distinct.size >= opts.total) await sleep(6000); // let auto-commit (5 s) catch up
  const p1 = await probe(admin, 1);
  const p1Delivered = delivered.length;

  // Phase 2: one more record.
  await producePhase2();
  for (const p of opts.parts.keys())
    app('produced', { phase: 2, topic: opts.topic, partition: p, count: 1, transactional: false });
  const before = delivered.length;
  const p2Start = Date.now();
  while (delivered.length < before + opts.parts.size && Date.now() - p2Start < 30000) await sleep(100);
  await sleep(opts.phase2WaitMs);
  const p2 = await probe(admin, 2);

  const seen = new Set(delivered);
  const missing = [];
  const ranges = [];
  for (const [p, n] of [...opts.parts.entries()].sort((a, b) => a[0] - b[0])) {
    for (let o = 0; o < n; o++) {
      if (seen.has(`${p}:${o}`)) continue;
      missing.push(o);
      const last = ranges[ranges.length - 1];
      if (last && last[0] === p && last[2] === o - 1) last[2] = o; else ranges.push([p, o, o]);
    }
  }
  const one = opts.parts.size === 1;
  app('summary', {
    delivered_phase1: `${p1Delivered}/${opts.total}`,
    delivered_phase2: delivered.slice(p1Delivered).join(',') || '-',
    duplicates: delivered.length - new Set(delivered).size,
    committed_phase1: p1, committed_phase2: p2,
    undelivered: ranges.map(([p, a, b]) => (one ? '' : `${p}:`) + (a === b ? `${a}` : `${a}-${b}`)).join(',') || '-',
    undelivered_count: missing.length,
  });

  await Promise.all(timers);
  // each out of consumers first: a pause or resume timer still pending leaves it alone
  for (const [m, c] of [...consumers]) { consumers.delete(m); await c.disconnect(); }
  await admin.disconnect();
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
