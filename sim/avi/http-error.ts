/** A simulated Avi Controller's refusal: the HTTP status and Avi's message. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
