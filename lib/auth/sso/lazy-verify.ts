// Loaded with import() by lib/auth/sso-verifier.ts, only when a delivery needs SSO verification.
// Bundled on its own (scripts/esbuild-options.mjs), with its own copy of what it shares with the
// cold path: the verifier answers with outcomes, so no class of that copy meets the cold path's.
export { createSsoVerifier } from './verify.js';
