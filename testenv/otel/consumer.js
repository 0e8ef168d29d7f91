// A kafkajs consumer instrumented by @opentelemetry/instrumentation-kafkajs, exporting its
// spans over OTLP/HTTP (JSON) with a batch span processor flushed at exit: the
// application integration/otel_test.go runs against the embedded broker, whose deliveries
// `kstranded watch --otlp` judges from the spans alone.
//
// It plays the seed's loss: it consumes partition 0 of --topic in --group from the start,
// handles offsets up to --deliver-through, then seeks to --seek (the records between are
// never handed to the handler: no process span), handles that one record, commits the
// offset after it and exits.
//
//   NODE_PATH=$(testenv/otel/install.sh)/node_modules node testenv/otel/consumer.js \
//     --brokers 127.0.0.1:9092 --topic t --group g --otlp http://127.0.0.1:9638/v1/traces \
//     --deliver-through 81 --seek 201
//
// --otlp may be repeated: every URL gets every span (one exporter and processor each).
'use strict';

const args = { otlp: [] };
for (let i = 2; i < process.argv.length; i += 2) {
  const k = process.argv[i].replace(/^--/, '');
  const v = process.argv[i + 1];
  if (k === 'otlp') args.otlp.push(v);
  else args[k] = v;
}
for (const k of ['brokers', 'topic', 'group', 'deliver-through', 'seek']) {
  if (args[k] === undefined) {
    console.error(`consumer.js: --${k} is required`);
    process.exit(2);
  }
}
const through = Number(args['deliver-through']);
const seekTo = Number(args.seek);

// the SDK first: the instrumentation patches kafkajs when it is required
const api = require('@opentelemetry/api');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { TracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { KafkaJsInstrumentation } = require('@opentelemetry/instrumentation-kafkajs');

api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const provider = new TracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'kstranded-otel-consumer' }),
  spanProcessors: args.otlp.map((url) => new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }), scheduledDelayMillis: 200 })),
});
api.trace.setGlobalTracerProvider(provider);
registerInstrumentations({ instrumentations: [new KafkaJsInstrumentation()] });

const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const kafka = new Kafka({ clientId: 'kstranded-otel', brokers: args.brokers.split(','), logLevel: logLevel.WARN });
  const consumer = kafka.consumer({ groupId: args.group, sessionTimeout: 10000, heartbeatInterval: 1000 });
  await consumer.connect();
  await consumer.subscribe({ topic: args.topic, fromBeginning: true });
  const handled = [];
  let resolveDone;
  const done = new Promise((r) => { resolveDone = r; });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    console.error('consumer.js: the consumer crashed:', payload.error && payload.error.message);
    process.exit(1);
  });
  const guard = setTimeout(() => {
    console.error(`consumer.js: offset ${seekTo} not handled after 60s (handled ${handled.length})`);
    process.exit(1);
  }, 60000);
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ topic, partition, message }) => {
      const off = Number(message.offset);
      handled.push(off);
      if (off === through) {
        // the jump: the records after this one up to --seek are never handed over
        consumer.seek({ topic, partition, offset: String(seekTo) });
      } else if (off === seekTo) {
        await consumer.commitOffsets([{ topic, partition, offset: String(seekTo + 1) }]);
        resolveDone();
      }
    },
  });
  await done;
  clearTimeout(guard);
  await consumer.disconnect();
  await provider.forceFlush();
  await provider.shutdown();
  const first = handled[0];
  const last = handled[handled.length - 1];
  console.log(JSON.stringify({ msg: 'summary', handled: handled.length, first, last, committed: seekTo + 1 }));
}

main().catch(async (e) => {
  console.error('consumer.js:', e);
  try { await provider.shutdown(); } catch (_) { /* exiting anyway */ }
  process.exit(1);
});
