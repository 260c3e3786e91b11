# What every node is told about the AKS cluster, read once from the cluster at deployment: its Kubernetes
# version, network profile, cluster DNS IP, kubelet identity, node NSG and outbound load balancer pool.
# The app passes them into each node's AKSNodeConfig (see shared/config/settings.ts); function_app.tf
# sets them as app settings.

variable "node_security_group_name" {
  description = "The node NSG in the node resource group, aks-agentpool-<cluster id>-nsg (az network nsg list -g <node resource group>)."
  type        = string
}

variable "attach_nsg_to_nic" {
  description = "true when the cluster runs on a VNet you brought (then the NIC carries the node NSG itself, as AKS does)."
  type        = bool
  default     = false
}

variable "kubernetes_version" {
  description = "Overrides the cluster's Kubernetes version (major.minor.patch); empty reads it from the cluster."
  type        = string
  default     = ""
}

variable "network_plugin_mode" {
  description = "Overrides the cluster's networkProfile.networkPluginMode (\"overlay\", or \"none\" for pod IPs from the node subnet); empty reads it from the cluster."
  type        = string
  default     = ""
}

variable "network_dataplane" {
  description = "Overrides the cluster's networkProfile.networkDataplane (\"cilium\" or \"azure\"); empty reads it from the cluster."
  type        = string
  default     = ""
}

# The azurerm data source exports only part of the network profile (not networkPluginMode,
# networkDataplane nor outboundType), so the cluster's own ARM representation is read for those, as the
# Bicep template reads them (modules/aks-cluster-inputs.bicep). A data source, so it is read at plan
# time: the outbound pool's role assignment (rbac.tf) is planned per pool, which needs the pool known.
data "azapi_resource_action" "cluster_network_profile" {
  type                   = "Microsoft.ContainerService/managedClusters@2024-09-01"
  resource_id            = data.azurerm_kubernetes_cluster.target.id
  method                 = "GET"
  response_export_values = ["properties.networkProfile"]
}

locals {
  cluster_network     = data.azurerm_kubernetes_cluster.target.network_profile[0]
  cluster_arm_network = data.azapi_resource_action.cluster_network_profile.output.properties.networkProfile
  # Absent properties are AKS's defaults: pod IPs from the node subnet, the Azure dataplane, a load balancer.
  cluster_plugin_mode   = lookup(local.cluster_arm_network, "networkPluginMode", "")
  cluster_dataplane     = lookup(local.cluster_arm_network, "networkDataplane", "azure")
  cluster_outbound_type = lookup(local.cluster_arm_network, "outboundType", "loadBalancer")
  cluster_kubelet_id    = data.azurerm_kubernetes_cluster.target.kubelet_identity[0]
  cluster_node_group    = data.azurerm_kubernetes_cluster.target.node_resource_group
  cluster_inputs = {
    kubernetes_version           = var.kubernetes_version != "" ? var.kubernetes_version : data.azurerm_kubernetes_cluster.target.current_kubernetes_version
    tenant_id                    = data.azurerm_subscription.current.tenant_id
    network_plugin               = local.cluster_network.network_plugin
    network_plugin_mode          = var.network_plugin_mode != "" ? (var.network_plugin_mode == "none" ? "" : var.network_plugin_mode) : local.cluster_plugin_mode
    network_dataplane            = var.network_dataplane != "" ? var.network_dataplane : local.cluster_dataplane
    dns_service_ip               = local.cluster_network.dns_service_ip
    node_security_group_id       = "/subscriptions/${data.azurerm_subscription.current.subscription_id}/resourceGroups/${local.cluster_node_group}/providers/Microsoft.Network/networkSecurityGroups/${var.node_security_group_name}"
    attach_nsg_to_nic            = tostring(var.attach_nsg_to_nic)
    kubelet_identity_resource_id = local.cluster_kubelet_id.user_assigned_identity_id
    kubelet_identity_client_id   = local.cluster_kubelet_id.client_id
    # Only outboundType loadBalancer has the cluster load balancer and its outbound pool.
    load_balancer_backend_pool_ids = local.cluster_outbound_type == "loadBalancer" ? "/subscriptions/${data.azurerm_subscription.current.subscription_id}/resourceGroups/${local.cluster_node_group}/providers/Microsoft.Network/loadBalancers/kubernetes/backendAddressPools/aksOutboundBackendPool" : ""
  }
}
