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
  description = "The cluster's networkProfile.networkPluginMode: \"overlay\", or \"\" for pod IPs from the node subnet (az aks show --query networkProfile)."
  type        = string
  default     = "overlay"
}

variable "network_dataplane" {
  description = "The cluster's networkProfile.networkDataplane: \"cilium\" or \"azure\"."
  type        = string
  default     = "cilium"
}

locals {
  cluster_network    = data.azurerm_kubernetes_cluster.target.network_profile[0]
  cluster_kubelet_id = data.azurerm_kubernetes_cluster.target.kubelet_identity[0]
  cluster_node_group = data.azurerm_kubernetes_cluster.target.node_resource_group
  cluster_inputs = {
    kubernetes_version           = var.kubernetes_version != "" ? var.kubernetes_version : data.azurerm_kubernetes_cluster.target.current_kubernetes_version
    tenant_id                    = data.azurerm_subscription.current.tenant_id
    network_plugin               = local.cluster_network.network_plugin
    network_plugin_mode          = var.network_plugin_mode
    network_dataplane            = var.network_dataplane
    dns_service_ip               = local.cluster_network.dns_service_ip
    node_security_group_id       = "/subscriptions/${data.azurerm_subscription.current.subscription_id}/resourceGroups/${local.cluster_node_group}/providers/Microsoft.Network/networkSecurityGroups/${var.node_security_group_name}"
    attach_nsg_to_nic            = tostring(var.attach_nsg_to_nic)
    kubelet_identity_resource_id = local.cluster_kubelet_id.user_assigned_identity_id
    kubelet_identity_client_id   = local.cluster_kubelet_id.client_id
    # Only outboundType loadBalancer has the cluster load balancer and its outbound pool.
    load_balancer_backend_pool_ids = local.cluster_network.outbound_type == "loadBalancer" ? "/subscriptions/${data.azurerm_subscription.current.subscription_id}/resourceGroups/${local.cluster_node_group}/providers/Microsoft.Network/loadBalancers/kubernetes/backendAddressPools/aksOutboundBackendPool" : ""
  }
}
