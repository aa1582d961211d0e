/** The parts of an HTTP request the relay looks at, independent of the Lambda event shape. */
export interface HttpRequest {
  method: string;
  /** Header names in lower case; repeated headers joined with ", " as API Gateway does. */
  headers: Record<string, string>;
  body: string | undefined;
  isBase64Encoded: boolean;
  requestId: string;
}

export interface HttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}
