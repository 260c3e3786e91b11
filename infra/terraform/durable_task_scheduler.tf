# The Durable Task Scheduler backend, created only with durable_backend = DurableTaskScheduler: a
# scheduler (Consumption, or Dedicated with its capacity units), the one task hub the app uses (named as
# DURABLE_TASK_HUB, which host.json's hubName reads), and the app identity's data role on that task hub
# and nothing wider. Through azapi: the pinned azurerm version has no resource for either type. Shapes:
# https://learn.microsoft.com/azure/templates/microsoft.durabletask/schedulers and .../schedulers/taskhubs;
# the role: infra/azure-roles.json (durableTaskRoles).

locals {
  durable_task_scheduler = var.durable_backend == "DurableTaskScheduler"
}

resource "azapi_resource" "durable_task_scheduler" {
  count     = local.durable_task_scheduler ? 1 : 0
  type      = "Microsoft.DurableTask/schedulers@2026-02-01"
  name      = substr("${var.name_prefix}-dts-${local.suffix}", 0, 64)
  parent_id = azurerm_resource_group.app.id
  location  = azurerm_resource_group.app.location
  tags      = local.tags
  body = {
    properties = {
      ipAllowlist = var.durable_task_scheduler_ip_allowlist
      # Capacity is a Dedicated SKU's only: Consumption has none to set. (A for expression, not a
      # conditional: the two objects would have different attributes.)
      sku = merge(
        { name = var.durable_task_scheduler_sku },
        { for key, value in { capacity = var.durable_task_scheduler_capacity } : key => value if var.durable_task_scheduler_sku == "Dedicated" },
      )
    }
  }
  # The endpoint (https://<name>.<region>.durabletask.io) goes into the connection string.
  response_export_values = ["properties.endpoint"]
}

resource "azapi_resource" "durable_task_hub" {
  count     = local.durable_task_scheduler ? 1 : 0
  type      = "Microsoft.DurableTask/schedulers/taskHubs@2026-02-01"
  name      = var.durable_task_hub_name
  parent_id = azapi_resource.durable_task_scheduler[0].id
  body      = {}
}

# The narrowest scope the role can be given at: this task hub, not the scheduler (which would reach every
# task hub in it).
resource "azurerm_role_assignment" "function_durable_task_hub" {
  count              = local.durable_task_scheduler ? 1 : 0
  scope              = azapi_resource.durable_task_hub[0].id
  role_definition_id = "${local.role_definition_prefix}${local.built_in_roles["Durable Task Data Contributor"]}"
  principal_id       = azurerm_user_assigned_identity.function.principal_id
  principal_type     = "ServicePrincipal"
}
