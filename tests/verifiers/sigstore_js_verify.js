// Verify one Sigstore bundle with sigstore-js (@sigstore/verify), offline.
// usage: node sigstore_js_verify.js BUNDLE TRUSTED_ROOT [--artifact FILE] [--identity SAN --issuer ISS]
//        [--key PEM] [--tlog-threshold N --ctlog-threshold N]
// Prints "OK" and exits 0, or prints the error and exits 1.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const { bundleFromJSON } = require('@sigstore/bundle');
const { TrustedRoot } = require('@sigstore/protobuf-specs');
const { Verifier, toSignedEntity, toTrustMaterial } = require('@sigstore/verify');

function main(argv) {
  const [bundlePath, rootPath, ...rest] = argv;
  const opts = {};
  for (let i = 0; i < rest.length; i += 2) opts[rest[i].replace(/^--/, '')] = rest[i + 1];
  const bundle = bundleFromJSON(JSON.parse(fs.readFileSync(bundlePath, 'utf8')));
  const root = TrustedRoot.fromJSON(JSON.parse(fs.readFileSync(rootPath, 'utf8')));
  const artifact = opts.artifact ? fs.readFileSync(opts.artifact) : undefined;
  const options = {};
  if (opts['tlog-threshold'] !== undefined) options.tlogThreshold = Number(opts['tlog-threshold']);
  if (opts['ctlog-threshold'] !== undefined) options.ctlogThreshold = Number(opts['ctlog-threshold']);
  let keys;
  if (opts.key) {
    // A managed-key bundle: the one key the caller trusts, whatever the bundle's hint.
    const publicKey = crypto.createPublicKey(fs.readFileSync(opts.key));
    keys = () => ({ publicKey, validFor: () => true });
  }
  const verifier = new Verifier(toTrustMaterial(root, keys), options);
  const policy = {};
  if (opts.identity) policy.subjectAlternativeName = opts.identity;
  if (opts.issuer) policy.extensions = { issuer: opts.issuer };
  verifier.verify(toSignedEntity(bundle, artifact), policy);
}

try {
  main(process.argv.slice(2));
  console.log('OK');
} catch (e) {
  console.log(`FAIL: ${e.code ? e.code + ': ' : ''}${e.message}`);
  process.exit(1);
}
