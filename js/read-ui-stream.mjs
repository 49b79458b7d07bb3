// Reads a UI message stream (server-sent events) with the `ai` package's own parser and message
// builder, the code `useChat` runs: every chunk must pass `uiMessageChunkSchema`, then
// `readUIMessageStream` folds them into the assistant UIMessage.
//
//   node read-ui-stream.mjs STREAM_FILE [START_MESSAGE_JSON_FILE]
//
// Prints {"chunks": [...], "message": <final UIMessage>, "errors": [...]} as JSON; exits 1 on a
// chunk the schema rejects.
import { readFileSync } from 'node:fs';
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from 'ai';

const [streamFile, startFile] = process.argv.slice(2);
const bytes = readFileSync(streamFile);
const start = startFile ? JSON.parse(readFileSync(startFile, 'utf8')) : undefined;

const source = new ReadableStream({
  start(controller) {
    controller.enqueue(new Uint8Array(bytes));
    controller.close();
  },
});

const chunks = [];
const invalid = [];
const chunkStream = parseJsonEventStream({ stream: source, schema: uiMessageChunkSchema }).pipeThrough(
  new TransformStream({
    transform(result, controller) {
      if (!result.success) {
        invalid.push(String(result.error?.message ?? result.error));
        return;
      }
      chunks.push(result.value);
      controller.enqueue(result.value);
    },
  }),
);

const errors = [];
let message;
for await (const snapshot of readUIMessageStream({
  stream: chunkStream,
  message: start,
  onError: error => errors.push(String(error?.message ?? error)),
})) {
  message = snapshot;
}

process.stdout.write(JSON.stringify({ chunks, message, errors, invalid }));
process.exit(invalid.length ? 1 : 0);
