import type { AttributeValue } from 'aws-lambda';

/** JSON's number grammar; a DynamoDB number that matches it is written as it is stored, digit for digit. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A stream image (DynamoDB attribute values) as one line of JSON. Numbers are written with DynamoDB's own
 * digits — up to 38 significant ones, more than a JavaScript number holds — so an archived item reads back
 * exactly; binary values are base64 text, sets are arrays.
 * @example
 * imageJson({ messageId: { S: '01J…' }, attempts: { N: '3' } }); // '{"messageId":"01J…","attempts":3}'
 */
export function imageJson(image: Readonly<Record<string, AttributeValue>>): string {
  return mapJson(image);
}

function mapJson(map: Readonly<Record<string, AttributeValue>>): string {
  const members = Object.entries(map).map(([name, value]) => `${JSON.stringify(name)}:${valueJson(value)}`);
  return `{${members.join(',')}}`;
}

function valueJson(value: AttributeValue): string {
  if (value.S !== undefined) return JSON.stringify(value.S);
  if (value.N !== undefined) return numberJson(value.N);
  if (value.BOOL !== undefined) return value.BOOL ? 'true' : 'false';
  if (value.NULL !== undefined) return 'null';
  if (value.B !== undefined) return JSON.stringify(value.B);
  if (value.M !== undefined) return mapJson(value.M);
  if (value.L !== undefined) return `[${value.L.map(valueJson).join(',')}]`;
  if (value.SS !== undefined) return JSON.stringify(value.SS);
  if (value.BS !== undefined) return JSON.stringify(value.BS);
  if (value.NS !== undefined) return `[${value.NS.map(numberJson).join(',')}]`;
  throw new TypeError(`unknown DynamoDB attribute value ${JSON.stringify(value)}`);
}

/** A DynamoDB number as JSON: its own text when JSON can hold it, else that text as a string. */
function numberJson(text: string): string {
  return JSON_NUMBER.test(text) ? text : JSON.stringify(text);
}
