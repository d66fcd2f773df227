/**
 * A request DynamoDB would refuse, raised by the in-memory DynamoDB with DynamoDB's error name
 * (`ValidationException`) and message, so code that inspects `error.name` sees what the service would send.
 */
export class ValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ValidationException';
  }
}
