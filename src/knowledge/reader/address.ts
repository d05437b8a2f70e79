/**
 * Which addresses the website reader may connect to: the shared guard of src/core/net.ts
 * (private and loopback refused at connect time, after DNS), unless CRAWL_ALLOW_PRIVATE=1.
 */
export { guardedLookup, isPrivateAddress, PrivateAddressError } from '../../core/net.js';
