/**
 * POSTURE_STATE_TABLE: the DynamoDB table that is every portal's ledger (src/state/table.ts).
 * Checked here as DynamoDB checks a table name, so a typo is refused at start, not at the first
 * request.
 */
import type { Problems } from './problems.js';

/** A table name as DynamoDB takes it: 3 to 255 letters, digits, `_`, `-` and `.`. */
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;
/** A table's ARN (any partition), which the SDK takes in place of its name. */
const TABLE_ARN = /^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table\/[A-Za-z0-9_.-]{3,255}$/;

/** The table name or ARN, or undefined (unset, or invalid with a problem added). */
export function stateTableOf(value: string | undefined, problems: Problems): string | undefined {
  if (value === undefined) return undefined;
  if (TABLE_NAME.test(value) || TABLE_ARN.test(value)) return value;
  problems.add(
    'POSTURE_STATE_TABLE',
    `POSTURE_STATE_TABLE (--state-table)=${JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value)} is not a DynamoDB table: give its name (3 to 255 letters, digits, _, - or .) or its ARN (arn:aws:dynamodb:<region>:<account>:table/<name>).`,
  );
  return undefined;
}
