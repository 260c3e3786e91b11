// Which VM sizes an AKS node may be, and what a size brings beyond vCPUs and memory (GPUs, the Hyper-V
// generation its image must be). The same rules as Karpenter's Azure provider: AKS refuses some sizes
// outright, some cannot run a node well, and some this project cannot boot.

/** Sizes AKS does not allow in node pools (too small to run a node), and two known to misbehave. */
const RESTRICTED_SIZES: ReadonlySet<string> = new Set(
  [
    'Standard_A0',
    'Standard_A1',
    'Standard_A1_v2',
    'Standard_B1s',
    'Standard_B1ms',
    'Standard_F1',
    'Standard_F1s',
    'Basic_A0',
    'Basic_A1',
    'Basic_A2',
    'Basic_A3',
    'Basic_A4',
    'Standard_E64i_v3',
    'Standard_E64is_v3',
  ].map((size) => size.toLowerCase()),
);

/** The smallest node AKS supports: 2 vCPUs and 3.5 GiB. */
export const MIN_NODE_VCPUS = 2;
export const MIN_NODE_MEMORY_GIB = 3.5;

// NVIDIA GPU sizes AKS installs drivers for (series, then sizes). A GPU size not listed here would boot
// without a usable driver, so it is not offered.
const NVIDIA_GPU_SIZES: ReadonlySet<string> = new Set(
  [
    // NC (K80), NCv2 (P100), NCv3 (V100)
    'nc6 nc12 nc24 nc24r nc6s_v2 nc12s_v2 nc24s_v2 nc24rs_v2 nc6s_v3 nc12s_v3 nc24s_v3 nc24rs_v3',
    // NCasT4_v3 (T4), NCads_A10_v4, NCads_A100_v4, NCads_H100_v5
    'nc4as_t4_v3 nc8as_t4_v3 nc16as_t4_v3 nc64as_t4_v3',
    'nc8ads_a10_v4 nc16ads_a10_v4 nc32ads_a10_v4',
    'nc24ads_a100_v4 nc48ads_a100_v4 nc96ads_a100_v4',
    'nc40ads_h100_v5 nc80adis_h100_v5',
    // NC RTX PRO 6000 Blackwell v6
    'nc24lds_xl_rtxpro6000bse_v6 nc36ds_xl_rtxpro6000bse_v6 nc36lds_xl_rtxpro6000bse_v6',
    'nc72ds_xl_rtxpro6000bse_v6 nc72lds_xl_rtxpro6000bse_v6 nc144ds_xl_rtxpro6000bse_v6',
    'nc144lds_xl_rtxpro6000bse_v6 nc288ds_xl_rtxpro6000bse_v6 nc288lds_xl_rtxpro6000bse_v6',
    // ND (P40), NDv2 (V100), NDv4 (A100), NDv5 (H100, H200), NDv6 (GB200, GB300)
    'nd6s nd12s nd24s nd24rs nd40rs_v2 nd40s_v3 nd96asr_v4 nd96ams_v4',
    'nd96amsr_a100_v4 nd96ams_a100_v4 nd96amsf_a100_v4 nd96amsrf_a100_v4 nd96ams_a100_flex_v4',
    'nd112asr_a100_v4 nd112amsr_a100_v4 nd120asr_a100_v4 nd120amsr_a100_v4',
    'nd96is_h100_v5 nd96isr_h100_v5 nd96isf_h100_v5 nd96isrf_h100_v5 nd96is_flex_h100_v5 nd96is_noib_h100_v5',
    'nd96is_h200_v5 nd96isr_h200_v5 nd96isf_h200_v5 nd96isrf_h200_v5',
    'nd128isr_ndr_gb200_v6 nd128isr_gb300_v6',
    // NV (M60), NVv3 (M60), NVads_A10_v5
    'nv6 nv12 nv24 nv24r nv12s_v3 nv24s_v3 nv48s_v3',
    'nv6ads_a10_v5 nv12ads_a10_v5 nv18ads_a10_v5 nv36ads_a10_v5 nv36adms_a10_v5 nv72ads_a10_v5',
  ]
    .flatMap((line) => line.split(' '))
    .map((size) => `standard_${size}`),
);

/** The size's name in lower case without Azure's "_Promo" suffix, as the GPU list spells it. */
function normalized(vmSize: string): string {
  return vmSize.toLowerCase().replace(/_promo$/, '');
}

export function isNvidiaGpuSize(vmSize: string): boolean {
  return NVIDIA_GPU_SIZES.has(normalized(vmSize));
}

/**
 * Constrained-vCPU sizes ("Standard_M8-2ms", "Standard_E16-4ds_v5") keep the memory and licence cost of
 * the larger size while exposing fewer vCPUs; AKS's reservations and the provider both assume a size's
 * vCPUs are all usable, so they are not offered.
 */
export function isConstrainedVcpuSize(vmSize: string): boolean {
  return /^(standard|basic)_[a-z]+\d+-\d+/i.test(vmSize);
}

/** Confidential sizes (DC and EC series) need confidential images and attestation, not supported here. */
export function isConfidentialSize(vmSize: string): boolean {
  return /^(standard|basic)_(dc|ec)/i.test(vmSize);
}

export interface SizeFacts {
  vmSize: string;
  cpu: number;
  memoryGiB: number;
  /** The catalog's GPUs capability (0 when absent). */
  gpus: number;
}

/** Why an AKS node cannot be this size, or undefined when it can. */
export function unsupportedSizeReason(size: SizeFacts): string | undefined {
  if (RESTRICTED_SIZES.has(size.vmSize.toLowerCase())) return 'restricted by AKS';
  if (size.cpu < MIN_NODE_VCPUS) return `fewer than ${MIN_NODE_VCPUS} vCPUs`;
  if (size.memoryGiB < MIN_NODE_MEMORY_GIB) return `less than ${MIN_NODE_MEMORY_GIB} GiB of memory`;
  if (isConstrainedVcpuSize(size.vmSize)) return 'constrained vCPUs';
  if (isConfidentialSize(size.vmSize)) return 'confidential size';
  if (size.gpus > 0 && !isNvidiaGpuSize(size.vmSize)) return 'GPU without AKS driver support';
  return undefined;
}
