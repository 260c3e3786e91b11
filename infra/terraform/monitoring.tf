# Log Analytics + workspace-based Application Insights (local auth off: telemetry is sent with the app's
# managed identity), the launch-funnel workbook, and log alerts on the functions' metric records.
# The workbook and the alert queries are the same files the Bicep version loads (infra/monitoring/).

resource "azurerm_log_analytics_workspace" "app" {
  name                = "${var.name_prefix}-logs"
  resource_group_name = azurerm_resource_group.app.name
  location            = azurerm_resource_group.app.location
  sku                 = "PerGB2018"
  retention_in_days   = 30
  tags                = local.tags
}

resource "azurerm_application_insights" "app" {
  name                         = "${var.name_prefix}-appi"
  resource_group_name          = azurerm_resource_group.app.name
  location                     = azurerm_resource_group.app.location
  workspace_id                 = azurerm_log_analytics_workspace.app.id
  application_type             = "web"
  local_authentication_enabled = false
  tags                         = local.tags
}

resource "azurerm_application_insights_workbook" "launch_funnel" {
  name                = uuidv5("url", "${azurerm_application_insights.app.id}/nodeclaim-launch-funnel")
  resource_group_name = azurerm_resource_group.app.name
  location            = azurerm_resource_group.app.location
  display_name        = "NodeClaim launch funnel (${var.name_prefix})"
  category            = "workbook"
  source_id           = lower(azurerm_application_insights.app.id)
  data_json           = file("${path.module}/../monitoring/workbook.json")
  tags                = local.tags
}

resource "azurerm_monitor_action_group" "alerts" {
  count               = var.alert_email == "" ? 0 : 1
  name                = "${var.name_prefix}-alerts"
  resource_group_name = azurerm_resource_group.app.name
  short_name          = "nodeclaims"

  email_receiver {
    name                    = "operators"
    email_address           = var.alert_email
    use_common_alert_schema = true
  }
}

locals {
  # One log alert per concern; each query returns rows only when something is wrong.
  alerts = {
    "launch-failure-rate" = {
      display_name = "NodeClaim launch failure rate above 20%"
      description  = "More than 20% of the VM launches of a NodePool failed in the last 30 minutes (at least 5 attempts). See the workbook's failures by reason."
      severity     = 2
      window       = "PT30M"
      query        = file("${path.module}/../monitoring/alerts/launch-failure-rate.kql")
      dimension    = "nodepool"
    }
    "registration-timeouts" = {
      display_name = "NodeClaims deleted after registration timeout"
      description  = "A NodeClaim's VM was created but its Node never registered, so the NodeClaim was deleted. Check bootstrap data, the bootstrap token, node networking and the image."
      severity     = 2
      window       = "PT15M"
      query        = file("${path.module}/../monitoring/alerts/registration-timeouts.kql")
      dimension    = "nodepool"
    }
    "poison-queue-messages" = {
      display_name = "NodeClaim event messages moved to the poison queue"
      description  = "The objectEvents function failed on a bridge message maxDequeueCount times and the host moved it to the poison queue. Inspect the message and the function's errors."
      severity     = 3
      window       = "PT15M"
      query        = file("${path.module}/../monitoring/alerts/poison-queue-messages.kql")
      dimension    = "queue"
    }
  }
}

resource "azurerm_monitor_scheduled_query_rules_alert_v2" "alerts" {
  for_each             = local.alerts
  name                 = "${var.name_prefix}-${each.key}"
  resource_group_name  = azurerm_resource_group.app.name
  location             = azurerm_resource_group.app.location
  display_name         = each.value.display_name
  description          = each.value.description
  severity             = each.value.severity
  enabled              = true
  scopes               = [azurerm_application_insights.app.id]
  evaluation_frequency = "PT5M"
  window_duration      = each.value.window

  criteria {
    query                   = each.value.query
    time_aggregation_method = "Count"
    operator                = "GreaterThan"
    threshold               = 0

    dimension {
      name     = each.value.dimension
      operator = "Include"
      values   = ["*"]
    }

    failing_periods {
      number_of_evaluation_periods             = 1
      minimum_failing_periods_to_trigger_alert = 1
    }
  }

  auto_mitigation_enabled = true

  dynamic "action" {
    for_each = azurerm_monitor_action_group.alerts
    content {
      action_groups = [action.value.id]
    }
  }

  tags = local.tags
}
