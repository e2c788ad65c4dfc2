const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/**
 * `s` as UTF-8 carries it (Buffer, TextEncoder, protobuf): a lone UTF-16 surrogate, legal in JSON
 * text, has no encoding and each becomes U+FFFD, so `X\ud800` and `X\ud801` are both written `X\ufffd`.
 * Portal text that becomes a label value goes through this, so what is one value on the wire is
 * one value in the counts.
 */
export function asWritten(s: string): string {
  // Most text has no surrogate at all: a scan of char codes is far cheaper than the expression.
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) return LONE_SURROGATE.test(s) ? s.replace(LONE_SURROGATES, '\ufffd') : s;
  }
  return s;
}
