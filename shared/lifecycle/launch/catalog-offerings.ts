// The region's catalog offerings now come from the cloud provider (cloudprovider/catalog-offerings.ts).
// This path is kept only because the local scenarios still import it from here; they move with their
// owners' next change, and then this file goes.
export { catalogOfferings } from '../../cloudprovider/catalog-offerings.js';
