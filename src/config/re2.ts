/**
 * Regular expressions as Prometheus reads them: a label matcher's `=~` pattern is anchored at both
 * ends and compiled by Go's regexp (RE2 syntax), which refuses much that JavaScript accepts (`\u`
 * escapes, lookaround, backreferences, a repeat above 1000). re2js, a port of RE2, compiles it the
 * same way here, so a config is refused with Prometheus's own reason rather than at rule load.
 */
import { RE2JS } from 're2js';

/** Go's regexp reports its errors so; the reason is what follows. */
const PREFIX = 'error parsing regexp: ';

/** Go's reason for refusing `expression`, or undefined when it compiles. */
function reason(expression: string): string | undefined {
  try {
    RE2JS.compile(expression);
    return undefined;
  } catch (err) {
    const message = (err as Error).message;
    return message.startsWith(PREFIX) ? message.slice(PREFIX.length) : message;
  }
}

/**
 * Why Prometheus would refuse `pattern` as a label matcher's regular expression, or undefined
 * when it would take it. Prometheus parses the pattern alone (to optimise the match) and compiles
 * it anchored, `^(?s:` pattern `)$`: both must succeed (`a)|(b` balances only once anchored).
 */
export function re2Refusal(pattern: string): string | undefined {
  // A PromQL string is UTF-8: half a surrogate pair has no encoding, and `\ud800` no meaning in Go.
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(pattern)) return 'it holds half of a UTF-16 surrogate pair, which is not text';
  return reason(pattern) ?? reason(`^(?s:${pattern})$`);
}
