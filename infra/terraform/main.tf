# The app's resource group, the existing cluster, and the names every other file uses.
# Split by concern like the Bicep modules: storage.tf, monitoring.tf, bridge_identity.tf,
# function_app.tf (with the app identity and settings) and rbac.tf.

data "azurerm_subscription" "current" {}

data "azurerm_client_config" "current" {}

data "azurerm_kubernetes_cluster" "target" {
  name                = var.aks_cluster_name
  resource_group_name = var.aks_cluster_resource_group_name
}

locals {
  suffix               = substr(sha1("${data.azurerm_subscription.current.id}/${var.name_prefix}/${var.location}"), 0, 13)
  tags                 = merge(var.tags, { "nodeclaim-azure/cluster" = var.cluster_name })
  storage_account_name = substr("${var.name_prefix}${local.suffix}", 0, 24)
  kube_api_server_url  = var.kube_api_server_url != "" ? var.kube_api_server_url : "https://${data.azurerm_kubernetes_cluster.target.fqdn}:443"
  role_name_suffix     = "${var.name_prefix}-${substr(local.suffix, 0, 6)}"
  # Built-in role definition IDs from the one table both templates read (test/unit/infra-roles.test.ts).
  built_in_roles = jsondecode(file("${path.module}/../azure-roles.json")).roles
  # The custom roles' names, descriptions and actions, from the same table (Bicep and the local ARM
  # emulator read it too).
  custom_roles           = jsondecode(file("${path.module}/../azure-roles.json")).customRoles
  role_definition_prefix = "${data.azurerm_subscription.current.id}/providers/Microsoft.Authorization/roleDefinitions/"
}

resource "azurerm_resource_group" "app" {
  name     = var.app_resource_group_name != "" ? var.app_resource_group_name : "${var.name_prefix}-nodeclaims"
  location = var.location
  tags     = local.tags
}
