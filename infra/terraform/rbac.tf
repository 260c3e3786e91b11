# Every permission of the two identities, each on the resource it is used on:
#   Function App identity: storage data (host, Durable Functions, queue, table), telemetry
#     publishing, VMs + their NICs and disks in the node resource group, assigning the kubelet identity
#     (that identity only), joining the outbound backend pool (that pool only), the node NSG (only when
#     the NIC carries it) and the node subnet, deploying into each configured Capacity Reservation Group
#     (none when none is configured), the Resource SKU catalog, async-operation status and the community
#     gallery's node image versions (subscription-wide reads), and the Kubernetes API (with AzureRBAC,
#     custom roles holding what the Kubernetes roles of infra/k8s/functions grant; with KubernetesRBAC,
#     those Kubernetes roles themselves).
#   Bridge identity: send messages to the events queue, nothing else.
# With durable_backend = DurableTaskScheduler the app identity's role on its task hub is assigned beside
# the task hub, in durable_task_scheduler.tf.
# Custom roles hold exactly the actions the app's Azure calls need, instead of Virtual Machine
# Contributor (which can also run commands on, and reset passwords of, every VM in the group).

locals {
  node_resource_group_id = "${data.azurerm_subscription.current.id}/resourceGroups/${var.node_resource_group_name}"
  subnet_subscription_id = "/subscriptions/${split("/", var.node_subnet_id)[2]}"
  azure_rbac             = var.kubernetes_authorization == "AzureRBAC"
  # One definition per custom role of the table; the AKS data roles only with AzureRBAC.
  defined_custom_roles = {
    for key, role in local.custom_roles : key => role if local.azure_rbac || !startswith(role.assignedAt, "aks")
  }
  outbound_pool_ids = toset(compact([for id in split(",", local.cluster_inputs.load_balancer_backend_pool_ids) : trimspace(id)]))
  events_queue_id        = "${azurerm_storage_account.app.id}/queueServices/default/queues/${azurerm_storage_queue.events.name}"
  # The Functions host keeps leases and timer state in blobs and Durable Functions its task hub in
  # blobs, queues and tables; all three data roles are what identity-based AzureWebJobsStorage needs.
  function_storage_roles = toset([
    "Storage Blob Data Owner",
    "Storage Queue Data Contributor",
    "Storage Table Data Contributor",
  ])
}

resource "azurerm_role_definition" "custom" {
  for_each    = local.defined_custom_roles
  name        = "${each.value.roleName} (${local.role_name_suffix})"
  scope       = data.azurerm_subscription.current.id
  description = each.value.description

  permissions {
    actions          = each.value.actions
    not_actions      = []
    data_actions     = try(each.value.dataActions, [])
    not_data_actions = []
  }

  # Only the subnet role may be assigned in another subscription (a VNet you brought may live there).
  assignable_scopes = each.value.assignedAt == "nodeSubnet" ? distinct([data.azurerm_subscription.current.id, local.subnet_subscription_id]) : [data.azurerm_subscription.current.id]
}

# The definitions of earlier versions, one resource each: the same role definitions, now keyed by role.
moved {
  from = azurerm_role_definition.vm_operator
  to   = azurerm_role_definition.custom["vmOperator"]
}

moved {
  from = azurerm_role_definition.compute_catalog_reader
  to   = azurerm_role_definition.custom["computeCatalogReader"]
}

moved {
  from = azurerm_role_definition.capacity_reservation_user
  to   = azurerm_role_definition.custom["capacityReservationUser"]
}

moved {
  from = azurerm_role_definition.subnet_joiner
  to   = azurerm_role_definition.custom["subnetJoiner"]
}

resource "azurerm_role_assignment" "function_storage" {
  for_each           = local.function_storage_roles
  scope              = azurerm_storage_account.app.id
  role_definition_id = "${local.role_definition_prefix}${local.built_in_roles[each.value]}"
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}

# The bridge only sends, and only to the events queue.
resource "azurerm_role_assignment" "bridge_queue_sender" {
  scope              = local.events_queue_id
  role_definition_id = "${local.role_definition_prefix}${local.built_in_roles["Storage Queue Data Message Sender"]}"
  principal_id       = azurerm_user_assigned_identity.bridge.principal_id
  principal_type     = "ServicePrincipal"
}

# Application Insights has local auth disabled, so telemetry needs this role.
resource "azurerm_role_assignment" "function_telemetry" {
  scope              = azurerm_application_insights.app.id
  role_definition_id = "${local.role_definition_prefix}${local.built_in_roles["Monitoring Metrics Publisher"]}"
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}

resource "azurerm_role_assignment" "function_vm_operator" {
  scope              = local.node_resource_group_id
  role_definition_id = azurerm_role_definition.custom["vmOperator"].role_definition_resource_id
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}

# The kubelet identity only: not the add-on identities AKS keeps in the same resource group.
resource "azurerm_role_assignment" "function_kubelet_identity_assigner" {
  scope              = local.cluster_inputs.kubelet_identity_resource_id
  role_definition_id = azurerm_role_definition.custom["kubeletIdentityAssigner"].role_definition_resource_id
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}

# The outbound pool only (none without outboundType loadBalancer): not the pools of LoadBalancer Services.
resource "azurerm_role_assignment" "function_outbound_pool_joiner" {
  for_each           = local.outbound_pool_ids
  scope              = each.value
  role_definition_id = azurerm_role_definition.custom["outboundPoolJoiner"].role_definition_resource_id
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}

# The node NSG, and only when the NIC carries it (a VNet you brought).
resource "azurerm_role_assignment" "function_node_security_group_joiner" {
  count              = var.attach_nsg_to_nic ? 1 : 0
  scope              = local.cluster_inputs.node_security_group_id
  role_definition_id = azurerm_role_definition.custom["nodeSecurityGroupJoiner"].role_definition_resource_id
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}

resource "azurerm_role_assignment" "function_subnet_join" {
  scope              = var.node_subnet_id
  role_definition_id = azurerm_role_definition.custom["subnetJoiner"].role_definition_resource_id
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}

resource "azurerm_role_assignment" "function_compute_catalog_reader" {
  scope              = data.azurerm_subscription.current.id
  role_definition_id = azurerm_role_definition.custom["computeCatalogReader"].role_definition_resource_id
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}

# Each configured Capacity Reservation Group, and none when none is configured.
resource "azurerm_role_assignment" "function_capacity_reservation_user" {
  for_each           = toset(var.capacity_reservation_group_ids)
  scope              = each.value
  role_definition_id = azurerm_role_definition.custom["capacityReservationUser"].role_definition_resource_id
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}

# Azure RBAC for Kubernetes authorization: what the ClusterRole of infra/k8s/functions grants, with its
# custom resources limited by the condition to the groups and resources that role names, and what its
# namespaced Roles grant, each on its own namespace (kube-system, the app's). With KubernetesRBAC nothing
# is granted in Azure.
resource "azurerm_role_assignment" "function_kubernetes_cluster_access" {
  count              = local.azure_rbac ? 1 : 0
  scope              = data.azurerm_kubernetes_cluster.target.id
  role_definition_id = azurerm_role_definition.custom["kubernetesClusterAccess"].role_definition_resource_id
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
  condition          = local.custom_roles.kubernetesClusterAccess.condition
  condition_version  = "2.0"
}

resource "azurerm_role_assignment" "function_kubernetes_kube_system_access" {
  count              = local.azure_rbac ? 1 : 0
  scope              = "${data.azurerm_kubernetes_cluster.target.id}/namespaces/${local.custom_roles.kubernetesKubeSystemAccess.namespace}"
  role_definition_id = azurerm_role_definition.custom["kubernetesKubeSystemAccess"].role_definition_resource_id
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}

resource "azurerm_role_assignment" "function_kubernetes_system_namespace_access" {
  count              = local.azure_rbac ? 1 : 0
  scope              = "${data.azurerm_kubernetes_cluster.target.id}/namespaces/${local.custom_roles.kubernetesSystemNamespaceAccess.namespace}"
  role_definition_id = azurerm_role_definition.custom["kubernetesSystemNamespaceAccess"].role_definition_resource_id
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}
