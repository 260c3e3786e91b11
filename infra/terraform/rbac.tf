# Every permission of the two identities, each at the narrowest scope that works:
#   Function App identity: storage data (host, Durable Functions, queue, table), telemetry
#     publishing, VMs + their NICs and disks in the node resource group (with the kubelet identity, the
#     outbound load balancer pool and the node NSG they attach, which AKS keeps there), the Resource SKU
#     catalog, async-operation status and the community gallery's node image versions (subscription-wide
#     reads), joining the node subnet, and the Kubernetes API (Azure RBAC role, or the Kubernetes
#     roles in infra/k8s/functions).
#   Bridge identity: send messages to the events queue, nothing else.
# Custom roles hold exactly the actions the app's Azure calls need, instead of Virtual Machine
# Contributor (which can also run commands on, and reset passwords of, every VM in the group).

locals {
  node_resource_group_id = "${data.azurerm_subscription.current.id}/resourceGroups/${var.node_resource_group_name}"
  subnet_subscription_id = "/subscriptions/${split("/", var.node_subnet_id)[2]}"
  events_queue_id        = "${azurerm_storage_account.app.id}/queueServices/default/queues/${azurerm_storage_queue.events.name}"
  # The Functions host keeps leases and timer state in blobs and Durable Functions its task hub in
  # blobs, queues and tables; all three data roles are what identity-based AzureWebJobsStorage needs.
  function_storage_roles = toset([
    "Storage Blob Data Owner",
    "Storage Queue Data Contributor",
    "Storage Table Data Contributor",
  ])
}

resource "azurerm_role_definition" "vm_operator" {
  name        = "${local.custom_roles.vmOperator.roleName} (${local.role_name_suffix})"
  scope       = data.azurerm_subscription.current.id
  description = local.custom_roles.vmOperator.description

  permissions {
    actions     = local.custom_roles.vmOperator.actions
    not_actions = []
  }

  assignable_scopes = [data.azurerm_subscription.current.id]
}

resource "azurerm_role_definition" "compute_catalog_reader" {
  name        = "${local.custom_roles.computeCatalogReader.roleName} (${local.role_name_suffix})"
  scope       = data.azurerm_subscription.current.id
  description = local.custom_roles.computeCatalogReader.description

  permissions {
    actions     = local.custom_roles.computeCatalogReader.actions
    not_actions = []
  }

  assignable_scopes = [data.azurerm_subscription.current.id]
}

resource "azurerm_role_definition" "capacity_reservation_user" {
  name        = "${local.custom_roles.capacityReservationUser.roleName} (${local.role_name_suffix})"
  scope       = data.azurerm_subscription.current.id
  description = local.custom_roles.capacityReservationUser.description

  permissions {
    actions     = local.custom_roles.capacityReservationUser.actions
    not_actions = []
  }

  assignable_scopes = [data.azurerm_subscription.current.id]
}

resource "azurerm_role_definition" "subnet_joiner" {
  name        = "${local.custom_roles.subnetJoiner.roleName} (${local.role_name_suffix})"
  scope       = data.azurerm_subscription.current.id
  description = local.custom_roles.subnetJoiner.description

  permissions {
    actions     = local.custom_roles.subnetJoiner.actions
    not_actions = []
  }

  assignable_scopes = distinct([data.azurerm_subscription.current.id, local.subnet_subscription_id])
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
  role_definition_id = azurerm_role_definition.vm_operator.role_definition_resource_id
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}

resource "azurerm_role_assignment" "function_compute_catalog_reader" {
  scope              = data.azurerm_subscription.current.id
  role_definition_id = azurerm_role_definition.compute_catalog_reader.role_definition_resource_id
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}

# Groups may sit in any resource group of the subscription (CAPACITY_RESERVATION_GROUP_IDS names them).
resource "azurerm_role_assignment" "function_capacity_reservation_user" {
  scope              = data.azurerm_subscription.current.id
  role_definition_id = azurerm_role_definition.capacity_reservation_user.role_definition_resource_id
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}

resource "azurerm_role_assignment" "function_subnet_join" {
  scope              = var.node_subnet_id
  role_definition_id = azurerm_role_definition.subnet_joiner.role_definition_resource_id
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}

# Azure RBAC for Kubernetes authorization: the functions write cluster-scoped objects (Nodes,
# NodeClaims), so no namespaced built-in role fits. With KubernetesRBAC nothing is granted in Azure.
resource "azurerm_role_assignment" "function_cluster_admin" {
  count              = var.kubernetes_authorization == "AzureRBAC" ? 1 : 0
  scope              = data.azurerm_kubernetes_cluster.target.id
  role_definition_id = "${local.role_definition_prefix}${local.built_in_roles["Azure Kubernetes Service RBAC Cluster Admin"]}"
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}
