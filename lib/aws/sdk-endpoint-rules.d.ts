// The SDK clients' compiled endpoint rules. Their packages have no export for them and keep
// their declarations apart (dist-types), so the modules are declared here as they are.

declare module '@aws-sdk/client-secrets-manager/dist-es/endpoint/bdd.js' {
  export const bdd: import('@smithy/core/endpoints').BinaryDecisionDiagram;
}

declare module '@aws-sdk/client-dynamodb/dist-es/endpoint/bdd.js' {
  export const bdd: import('@smithy/core/endpoints').BinaryDecisionDiagram;
}
