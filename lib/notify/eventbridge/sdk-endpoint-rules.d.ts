// EventBridge's compiled endpoint rules, as lib/aws/sdk-endpoint-rules.d.ts declares the other
// services': the package has no export for them and keeps its declarations apart (dist-types).

declare module '@aws-sdk/client-eventbridge/dist-es/endpoint/bdd.js' {
  export const bdd: import('@smithy/core/endpoints').BinaryDecisionDiagram;
}
