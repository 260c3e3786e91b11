# Inputs, named like the Bicep parameters (snake_case). Each app-setting input names its setting.

variable "subscription_id" {
  description = "The subscription to deploy into (azurerm 4.x requires one); null takes ARM_SUBSCRIPTION_ID from the environment."
  type        = string
  default     = null
}

variable "location" {
  description = "Region of the app's resources (use the cluster's region)."
  type        = string
}

variable "name_prefix" {
  description = "Short lower-case prefix of every resource name (3-11 letters and digits)."
  type        = string
  validation {
    condition     = can(regex("^[a-z][a-z0-9]{2,10}$", var.name_prefix))
    error_message = "name_prefix must be 3-11 lower-case letters and digits, starting with a letter."
  }
}

variable "app_resource_group_name" {
  description = "Resource group created for the app's resources; empty uses \"<name_prefix>-nodeclaims\"."
  type        = string
  default     = ""
}

variable "cluster_name" {
  description = "CLUSTER_NAME: the cluster's name as written into VM tags (usually the AKS resource name)."
  type        = string
}

variable "aks_cluster_resource_group_name" {
  description = "Resource group of the existing AKS cluster resource."
  type        = string
}

variable "aks_cluster_name" {
  description = "Name of the existing AKS cluster resource (needs the OIDC issuer and Workload ID enabled)."
  type        = string
}

variable "node_resource_group_name" {
  description = "AZURE_NODE_RESOURCE_GROUP: resource group the node VMs are created in (usually the cluster's MC_ group)."
  type        = string
}

variable "node_subnet_id" {
  description = "VNET_SUBNET_ID: subnet for node NICs when an AKSNodeClass names none."
  type        = string
  validation {
    condition     = can(regex("(?i)^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\\.Network/virtualNetworks/[^/]+/subnets/[^/]+$", var.node_subnet_id))
    error_message = "node_subnet_id must be a subnet resource ID."
  }
}

variable "node_ssh_public_key" {
  description = "SSH_PUBLIC_KEY: OpenSSH public key for the node admin user."
  type        = string
}

variable "node_admin_username" {
  description = "LINUX_ADMIN_USERNAME: admin user of the node VMs."
  type        = string
  default     = "azureuser"
}

variable "kube_api_server_url" {
  description = "CLUSTER_ENDPOINT: API server URL the functions call and nodes join through; empty uses https://<cluster FQDN>:443 (set the private FQDN URL for a private cluster)."
  type        = string
  default     = ""
}

variable "kube_ca_cert" {
  description = "KUBE_CA_CERT: base64 of the cluster CA certificate, as in the kubeconfig's certificate-authority-data."
  type        = string
}

variable "bootstrap_api_server_url" {
  description = "BOOTSTRAP_API_SERVER_URL: API server URL written into node bootstrap data; empty uses the CLUSTER_ENDPOINT value."
  type        = string
  default     = ""
}

variable "bootstrap_ca_cert" {
  description = "BOOTSTRAP_CA_CERT: base64 of the CA nodes trust; empty uses kube_ca_cert."
  type        = string
  default     = ""
}

variable "capacity_reservation_group_ids" {
  description = "CAPACITY_RESERVATION_GROUP_IDS: Capacity Reservation Groups launches may use (ARM IDs in this subscription); the app may read and deploy into these only. Empty for none."
  type        = list(string)
  default     = []
  validation {
    condition     = alltrue([for id in var.capacity_reservation_group_ids : can(regex("^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\\.Compute/capacityReservationGroups/[^/]+$", id))])
    error_message = "capacity_reservation_group_ids must hold Capacity Reservation Group resource IDs."
  }
}

variable "kubernetes_authorization" {
  description = "AzureRBAC: the app identity gets custom roles holding, as AKS data actions, what the roles in infra/k8s/functions grant (rbac.tf). KubernetesRBAC: bind it with those roles themselves (narrower: per-name Lease access, subresources apart; azd up applies them)."
  type        = string
  default     = "KubernetesRBAC"
  validation {
    condition     = contains(["AzureRBAC", "KubernetesRBAC"], var.kubernetes_authorization)
    error_message = "kubernetes_authorization must be AzureRBAC or KubernetesRBAC."
  }
}

variable "function_subnet_id" {
  description = "Subnet for the Function App's VNet integration (delegated to Microsoft.App/environments); empty for none."
  type        = string
  default     = ""
}

variable "arm_endpoint" {
  description = "ARM_ENDPOINT: Azure Resource Manager endpoint of this cloud."
  type        = string
  default     = "https://management.azure.com"
}

variable "retail_prices_endpoint" {
  description = "RETAIL_PRICES_ENDPOINT: Azure Retail Prices API that VM prices are refreshed from every 12 h (public, no credentials)."
  type        = string
  default     = "https://prices.azure.com"
}

variable "events_queue_name" {
  description = "EVENTS_QUEUE_NAME: queue between the event bridge and the functions."
  type        = string
  default     = "nodeclaim-events"
}

variable "unavailable_offerings_table_name" {
  description = "UNAVAILABLE_OFFERINGS_TABLE: table of recently failed offerings."
  type        = string
  default     = "unavailableofferings"
}

variable "decision_records_table_name" {
  description = "DECISION_RECORDS_TABLE: table of what provisioning and disruption decided, for explain."
  type        = string
  default     = "decisionrecords"
}

variable "decision_record_retention_hours" {
  description = "DECISION_RECORD_RETENTION_HOURS: how long a decision record is kept for explain."
  type        = number
  default     = 24
}

variable "durable_task_hub_name" {
  description = "DURABLE_TASK_HUB: Durable Functions task hub name (letters and digits)."
  type        = string
  default     = "nodeclaims"
}

variable "durable_backend" {
  description = "The Durable Functions backend. AzureStorage: the task hub in the app's storage account (host.json's storageProvider). DurableTaskScheduler: a Durable Task Scheduler and task hub deployed beside the app (durable_task_scheduler.tf), selected by app settings that override host.json (docs/cost.md, \"The Durable backend\", for the sizing)."
  type        = string
  default     = "AzureStorage"
  validation {
    condition     = contains(["AzureStorage", "DurableTaskScheduler"], var.durable_backend)
    error_message = "durable_backend must be AzureStorage or DurableTaskScheduler."
  }
}

variable "durable_task_scheduler_sku" {
  description = "With durable_backend = DurableTaskScheduler: Consumption (per action, up to 500 actions/s) or Dedicated (per capacity unit, 2,000 actions/s each)."
  type        = string
  default     = "Consumption"
  validation {
    condition     = contains(["Consumption", "Dedicated"], var.durable_task_scheduler_sku)
    error_message = "durable_task_scheduler_sku must be Consumption or Dedicated."
  }
}

variable "durable_task_scheduler_capacity" {
  description = "With durable_task_scheduler_sku = Dedicated: capacity units (1-3; 3 for high availability)."
  type        = number
  default     = 1
  validation {
    condition     = var.durable_task_scheduler_capacity >= 1 && var.durable_task_scheduler_capacity <= 3
    error_message = "durable_task_scheduler_capacity must be 1, 2 or 3."
  }
}

variable "durable_task_scheduler_ip_allowlist" {
  description = "With durable_backend = DurableTaskScheduler: addresses allowed to reach the scheduler (IPv4, IPv6 or CIDR; an empty list refuses every caller). Every call is authenticated with the app identity whatever this allows."
  type        = list(string)
  default     = ["0.0.0.0/0"]
}

variable "durable_partition_count" {
  description = "With durable_backend = AzureStorage: control-queue partitions of the task hub (1-16), the most instances that run orchestrations at once. Fixed once the task hub exists: a new value needs a new task hub (durable_task_hub_name)."
  type        = number
  default     = 4
  validation {
    condition     = var.durable_partition_count >= 1 && var.durable_partition_count <= 16
    error_message = "durable_partition_count must be between 1 and 16."
  }
}

variable "maximum_instance_count" {
  description = "Upper bound on Function App instances."
  type        = number
  default     = 40
}

variable "always_ready_queue_instances" {
  description = "Always-ready instances of the event queue trigger (no cold start for the first pending pod after an idle spell; docs/cost.md). 0 turns it off."
  type        = number
  default     = 1
  validation {
    condition     = var.always_ready_queue_instances >= 0 && var.always_ready_queue_instances <= 20
    error_message = "always_ready_queue_instances must be from 0 to 20."
  }
}

variable "always_ready_durable_instances" {
  description = "Always-ready instances of the Durable Functions group (launch monitor, provisioning batcher, replacement, termination). 0 turns it off."
  type        = number
  default     = 1
  validation {
    condition     = var.always_ready_durable_instances >= 0 && var.always_ready_durable_instances <= 20
    error_message = "always_ready_durable_instances must be from 0 to 20."
  }
}

variable "instance_memory_in_mb" {
  description = "Function App instance memory in MB (512, 2048 or 4096)."
  type        = number
  default     = 2048
}

variable "sweep_schedule" {
  description = "SWEEP_SCHEDULE: NCRONTAB (with seconds) of the lifecycle sweep."
  type        = string
  default     = "*/15 * * * * *"
}

variable "registration_timeout_minutes" {
  description = "REGISTRATION_TIMEOUT_MINUTES: launched NodeClaims whose Node has not registered by then are deleted."
  type        = number
  default     = 15
}

variable "vnet_guid" {
  description = "VNET_GUID: resourceGuid of the node VNet; Azure CNI Overlay nodes carry it as a label. Empty for none."
  type        = string
  default     = ""
}

variable "vm_memory_overhead_percent" {
  description = "VM_MEMORY_OVERHEAD_PERCENT: the share of a size's memory the guest does not see, as a fraction (0.075 is 7.5%), taken off every instance type's memory before scheduling."
  type        = number
  default     = 0.075
}

variable "kube_token_scope" {
  description = "KUBE_TOKEN_SCOPE: Entra scope of the API server's token (the AKS AAD server application)."
  type        = string
  default     = "6dae42f8-4368-4678-94ff-3960e28e3630/.default"
}

variable "build_commit" {
  description = "BUILD_COMMIT: commit label of karpenter_build_info; empty for none."
  type        = string
  default     = ""
}

variable "launch_poll_interval_seconds" {
  description = "LAUNCH_POLL_INTERVAL_SECONDS: shortest wait between polls of a VM creation."
  type        = number
  default     = 5
}

variable "launch_max_poll_interval_seconds" {
  description = "LAUNCH_MAX_POLL_INTERVAL_SECONDS: longest wait between those polls, with many launches in flight."
  type        = number
  default     = 60
}

variable "launch_deadline_minutes" {
  description = "LAUNCH_DEADLINE_MINUTES: a VM creation not finished by then is abandoned."
  type        = number
  default     = 15
}

variable "sku_cache_seconds" {
  description = "SKU_CACHE_SECONDS: how long the region's VM size list is kept."
  type        = number
  default     = 3600
}

variable "node_image_cache_seconds" {
  description = "NODE_IMAGE_CACHE_SECONDS: how long a node image definition's published versions are kept."
  type        = number
  default     = 3600
}

variable "explain_audience" {
  description = "EXPLAIN_AUDIENCE: the app registration users get explain tokens for (client ID and/or Application ID URI, comma-separated); empty: explain answers 503 (docs/explain.md)."
  type        = string
  default     = ""
}

variable "gc_schedule" {
  description = "GC_SCHEDULE: NCRONTAB (with seconds) of orphan VM collection."
  type        = string
  default     = "0 */5 * * * *"
}

variable "replacement_poll_seconds" {
  description = "REPLACEMENT_POLL_SECONDS: how often a replacement looks at its new NodeClaim."
  type        = number
  default     = 5
}

variable "replacement_timeout_minutes" {
  description = "REPLACEMENT_TIMEOUT_MINUTES: a replacement not Initialized by then is abandoned and the old node put back in service."
  type        = number
  default     = 30
}

variable "replacement_fallback_seconds" {
  description = "REPLACEMENT_FALLBACK_SECONDS: how long a disruption waits for a wake from its replacements before it looks at them itself."
  type        = number
  default     = 180
}

variable "replacement_backoff_minutes" {
  description = "REPLACEMENT_BACKOFF_MINUTES: a node whose replacement failed is not tried again before this."
  type        = number
  default     = 5
}

variable "drain_poll_seconds" {
  description = "DRAIN_POLL_SECONDS: how often termination retries evictions a PodDisruptionBudget refused."
  type        = number
  default     = 5
}

variable "orphan_vm_grace_minutes" {
  description = "ORPHAN_VM_GRACE_MINUTES: a tagged VM without a NodeClaim is deleted only once it is this old."
  type        = number
  default     = 10
}

variable "consolidation_validation_seconds" {
  description = "CONSOLIDATION_VALIDATION_SECONDS: a consolidation decision is checked again this long after it was made, before it acts."
  type        = number
  default     = 15
}

variable "request_timeout_seconds" {
  description = "REQUEST_TIMEOUT_SECONDS: how long one ARM or Kubernetes API request may take before it is abandoned and retried."
  type        = number
  default     = 30
}

variable "metrics_per_node" {
  description = "METRICS_PER_NODE: export the per-node gauges (karpenter_nodes_allocatable, operator_nodeclaim_status_condition_count), a series per node or NodeClaim each export; off by default for the telemetry bill."
  type        = bool
  default     = false
}

variable "batch_idle_duration" {
  description = "BATCH_IDLE_DURATION: a provisioning window closes this long after the last new pending pod (a Go duration)."
  type        = string
  default     = "1s"
}

variable "batch_max_duration" {
  description = "BATCH_MAX_DURATION: and at the latest this long after it opened (a Go duration)."
  type        = string
  default     = "10s"
}

variable "provisioning_selector" {
  description = "PROVISIONING_SELECTOR: label selector the pods and the NodePools' template labels must match, for several systems sharing one cluster; empty provisions for every pod."
  type        = string
  default     = ""
}

variable "preference_policy" {
  description = "PREFERENCE_POLICY: Karpenter's: Respect tries preferred affinities and ScheduleAnyway spreads, relaxing them only when they cannot be met; Ignore leaves them out from the start."
  type        = string
  default     = "Respect"
  validation {
    condition     = contains(["Respect", "Ignore"], var.preference_policy)
    error_message = "preference_policy must be Respect or Ignore."
  }
}

variable "min_values_policy" {
  description = "MIN_VALUES_POLICY: Karpenter's: Strict creates no NodeClaim whose instance types fall below a requirement's minValues; BestEffort creates it with those minValues lowered, annotated karpenter.sh/nodeclaim-min-values-relaxed."
  type        = string
  default     = "Strict"
  validation {
    condition     = contains(["Strict", "BestEffort"], var.min_values_policy)
    error_message = "min_values_policy must be Strict or BestEffort."
  }
}

variable "feature_gates" {
  description = "FEATURE_GATES: Karpenter's Gate=true|false list (SpotToSpotConsolidation, NodeOverlay, CapacityBuffer, NodeRepair, ReservedCapacity); empty keeps upstream's defaults."
  type        = string
  default     = ""
}

variable "repair_policies" {
  description = "REPAIR_POLICIES: node repair policies, Type=Status[/Reason]:toleration[:action] (read with FEATURE_GATES NodeRepair=true)."
  type        = string
  default     = "Ready=False:10m:reboot,Ready=Unknown:10m:reboot,kubernetes.azure.com/NodeHealthy=False:0s:reboot,PreemptionScheduled=True:0s:preempted"
}

variable "repair_max_reboots" {
  description = "REPAIR_MAX_REBOOTS: reboots tried before a node whose policy allows one is replaced (0: replace at once)."
  type        = number
  default     = 1
}

variable "repair_reboot_recovery_seconds" {
  description = "REPAIR_REBOOT_RECOVERY_SECONDS: how long a rebooted node has for its condition to clear before it is replaced."
  type        = number
  default     = 300
}

variable "preemption_drain_seconds" {
  description = "PREEMPTION_DRAIN_SECONDS: a node with a spot eviction notice is drained at the latest this long after the notice."
  type        = number
  default     = 15
}

variable "rollout_policy" {
  description = "ROLLOUT_POLICY: how a NodePool's drift rolls out: Canary (a canary, then waves at the Drifted budget with health gates) or Immediate (the budget alone)."
  type        = string
  default     = "Canary"
}

variable "rollout_canary" {
  description = "ROLLOUT_CANARY: the canary's size: a number of nodes, or a percentage of the NodePool's drifted nodes (10%)."
  type        = string
  default     = "1"
}

variable "rollout_poll_seconds" {
  description = "ROLLOUT_POLL_SECONDS: how often a rollout looks at its NodePool."
  type        = number
  default     = 10
}

variable "rollout_soak_seconds" {
  description = "ROLLOUT_SOAK_SECONDS: how long the health gates watch a finished wave before the next one starts."
  type        = number
  default     = 300
}

variable "rollout_initialized_within_seconds" {
  description = "ROLLOUT_INITIALIZED_WITHIN_SECONDS: a replacement not Initialized this long after its creation fails a rollout gate."
  type        = number
  default     = 600
}

variable "rollout_pod_ready_within_seconds" {
  description = "ROLLOUT_POD_READY_WITHIN_SECONDS: a pod on a replacement not Ready this long after it was scheduled fails a rollout gate."
  type        = number
  default     = 300
}

variable "rollout_max_pod_restarts" {
  description = "ROLLOUT_MAX_POD_RESTARTS: restarts of one pod on a replacement that fail a rollout gate (with more restarts than on the old nodes)."
  type        = number
  default     = 3
}

variable "alert_email" {
  description = "E-mail address for alerts; empty creates the alert rules without notifications."
  type        = string
  default     = ""
}

variable "bridge_service_account_namespace" {
  description = "SYSTEM_NAMESPACE: the namespace the chart is installed in, where the bridge ServiceAccount (trusted by its federated credential) and the sweep's Lease live."
  type        = string
  default     = "nodeclaim-system"
}

variable "bridge_service_account_name" {
  description = "Name of the event bridge ServiceAccount (infra/k8s/bridge/serviceaccount.yaml)."
  type        = string
  default     = "event-bridge"
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}
