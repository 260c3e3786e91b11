// The shipped on-demand price table: USD per hour, Linux, pay-as-you-go, for every region and VM size
// of the catalog this project knows (the sizes the local ARM emulator serves). Used until the first
// refresh from the Azure Retail Prices API succeeds, and for any size that refresh does not return.
//
// Where the numbers come from: the Azure Retail Prices API (prices.azure.com/api/retail/prices), as
// captured in the Azure Karpenter provider's generated table (karpenter-provider-azure,
// pkg/providers/pricing/zz_generated.pricing.go, generated 2026-06-18T03:43:41Z). Three entries there
// are out of line with the rest of their series (a per-vCPU price twice the series' rate, likely a
// non-Linux meter picked up) and are replaced by the series' per-vCPU rate × vCPUs:
//   Standard_D2as_v5 in eastus and westus2 (0.178 → 0.086), Standard_D16as_v5 in westus2
//   (1.424 → 0.688) and westeurope (1.568 → 0.832).
//
// Spot prices: the upstream table has none, and the real API cannot be reached from where this table
// was written, so none are shipped; until a refresh brings them, a spot offering is priced like its
// on-demand one (as the Azure provider does), which never makes spot look cheaper than it is known to be.
//
// To regenerate, with network access: for each region, GET
//   https://prices.azure.com/api/retail/prices?$filter=serviceName eq 'Virtual Machines' and
//   priceType eq 'Consumption' and armRegionName eq '<region>'
// following NextPageLink, keep the items the refresh keeps (pricesFromRetailItems in price-book.ts),
// and write the on-demand (and, then, spot) prices of the catalog's sizes here.
export const STATIC_PRICES_AS_OF = '2026-06-18T03:43:41Z';

/** Region used for a region the table does not know (as the Azure provider falls back to eastus). */
export const FALLBACK_REGION = 'eastus';

/** eastus and westus2 list the same Linux pay-as-you-go price for every size of the catalog (the day a
 * regeneration finds them apart, they get a table each). */
const EASTUS_AND_WESTUS2: Readonly<Record<string, number>> = {
  Standard_D2s_v5: 0.096,
  Standard_D4s_v5: 0.192,
  Standard_D8s_v5: 0.384,
  Standard_D16s_v5: 0.768,
  Standard_D2ds_v5: 0.113,
  Standard_D4ds_v5: 0.226,
  Standard_D8ds_v5: 0.452,
  Standard_D16ds_v5: 0.904,
  Standard_D2as_v5: 0.086,
  Standard_D4as_v5: 0.172,
  Standard_D8as_v5: 0.344,
  Standard_D16as_v5: 0.688,
  Standard_D2ps_v5: 0.077,
  Standard_D4ps_v5: 0.154,
  Standard_D8ps_v5: 0.308,
  Standard_D16ps_v5: 0.616,
  Standard_E2s_v5: 0.126,
  Standard_E4s_v5: 0.252,
  Standard_E8s_v5: 0.504,
  Standard_E16s_v5: 1.008,
  Standard_F2s_v2: 0.0846,
  Standard_F4s_v2: 0.169,
  Standard_F8s_v2: 0.338,
  Standard_F16s_v2: 0.677,
};

export const staticOnDemandPrices: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  eastus: EASTUS_AND_WESTUS2,
  westeurope: {
    Standard_D2s_v5: 0.115,
    Standard_D4s_v5: 0.23,
    Standard_D8s_v5: 0.46,
    Standard_D16s_v5: 0.92,
    Standard_D2ds_v5: 0.136,
    Standard_D4ds_v5: 0.272,
    Standard_D8ds_v5: 0.544,
    Standard_D16ds_v5: 1.088,
    Standard_D2as_v5: 0.104,
    Standard_D4as_v5: 0.208,
    Standard_D8as_v5: 0.416,
    Standard_D16as_v5: 0.832,
    Standard_D2ps_v5: 0.092,
    Standard_D4ps_v5: 0.184,
    Standard_D8ps_v5: 0.368,
    Standard_D16ps_v5: 0.736,
    Standard_E2s_v5: 0.152,
    Standard_E4s_v5: 0.304,
    Standard_E8s_v5: 0.608,
    Standard_E16s_v5: 1.216,
    Standard_F2s_v2: 0.097,
    Standard_F4s_v2: 0.194,
    Standard_F8s_v2: 0.388,
    Standard_F16s_v2: 0.776,
  },
  westus2: EASTUS_AND_WESTUS2,
};
