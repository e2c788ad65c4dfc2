// node:http2 as undici's client-h2.js sees it in chunks/undici.cjs (scripts/build.mjs). undici
// requires node:http2 when it loads, for the constants it destructures then, but calls it only for a
// connection that negotiated HTTP/2, which takes the Agent option allowH2 (off by default; src/ never
// sets it). Loading node:http2 cost about 8 ms of CPU in every process that sent a request
// (docs/performance.md): this stand-in holds those constants and loads the module on the first
// HTTP/2 connection. test/upstream/http2-stand-in.test.ts checks them against node:http2's own.
const constants = {
  HTTP2_HEADER_AUTHORITY: ':authority',
  HTTP2_HEADER_METHOD: ':method',
  HTTP2_HEADER_PATH: ':path',
  HTTP2_HEADER_SCHEME: ':scheme',
  HTTP2_HEADER_CONTENT_LENGTH: 'content-length',
  HTTP2_HEADER_EXPECT: 'expect',
  HTTP2_HEADER_STATUS: ':status',
  HTTP2_HEADER_PROTOCOL: ':protocol',
  NGHTTP2_REFUSED_STREAM: 7,
  NGHTTP2_CANCEL: 8,
};

module.exports = {
  constants,
  connect: (...args) => require('node:http2').connect(...args),
};
