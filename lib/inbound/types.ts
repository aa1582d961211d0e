/** The parts of an HTTP request the relay looks at, independent of the Lambda event shape. */
export interface HttpRequest {
  method: string;
  /** Header names in lower case; repeated headers joined with ", " as API Gateway does. */
  headers: Record<string, string>;
  body: string | undefined;
  isBase64Encoded: boolean;
  requestId: string;
  /** `https://<domain>` the request arrived on (API Gateway's `requestContext.domainName`): where triage links lead. */
  origin?: string | undefined;
}

export interface HttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}
