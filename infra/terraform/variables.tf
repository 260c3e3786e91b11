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
  description = "AZURE_RESOURCE_GROUP: resource group the node VMs are created in (usually the cluster's MC_ group)."
  type        = string
}

variable "node_subnet_id" {
  description = "AZURE_SUBNET_ID: subnet for node NICs when an AKSNodeClass names none."
  type        = string
  validation {
    condition     = can(regex("(?i)^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\\.Network/virtualNetworks/[^/]+/subnets/[^/]+$", var.node_subnet_id))
    error_message = "node_subnet_id must be a subnet resource ID."
  }
}

variable "node_ssh_public_key" {
  description = "NODE_SSH_PUBLIC_KEY: OpenSSH public key for the node admin user."
  type        = string
}

variable "node_admin_username" {
  description = "NODE_ADMIN_USERNAME: admin user of the node VMs."
  type        = string
  default     = "azureuser"
}

variable "kube_api_server_url" {
  description = "KUBE_API_SERVER_URL: API server URL the functions call; empty uses https://<cluster FQDN>:443 (set the private FQDN URL for a private cluster)."
  type        = string
  default     = ""
}

variable "kube_ca_cert" {
  description = "KUBE_CA_CERT: base64 of the cluster CA certificate, as in the kubeconfig's certificate-authority-data."
  type        = string
}

variable "bootstrap_api_server_url" {
  description = "BOOTSTRAP_API_SERVER_URL: API server URL written into node bootstrap data; empty uses the KUBE_API_SERVER_URL value."
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
  default     = "https://management.azure.com/"
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

variable "durable_task_hub_name" {
  description = "DURABLE_TASK_HUB: Durable Functions task hub name (letters and digits)."
  type        = string
  default     = "nodeclaims"
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

variable "alert_email" {
  description = "E-mail address for alerts; empty creates the alert rules without notifications."
  type        = string
  default     = ""
}

variable "bridge_service_account_namespace" {
  description = "Namespace of the event bridge ServiceAccount (infra/k8s/bridge/serviceaccount.yaml)."
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
