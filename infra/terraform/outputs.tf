output "app_resource_group_name" {
  description = "Resource group of the app."
  value       = azurerm_resource_group.app.name
}

output "function_app_name" {
  description = "Function App name (for `func azure functionapp publish` or zip deploy)."
  value       = azurerm_function_app_flex_consumption.app.name
}

output "function_principal_id" {
  description = "Object (principal) ID of the app identity: the Kubernetes RBAC subject when kubernetes_authorization is KubernetesRBAC."
  value       = azurerm_user_assigned_identity.function.principal_id
}

output "bridge_identity_client_id" {
  description = "Client ID for the bridge ServiceAccount annotation azure.workload.identity/client-id."
  value       = azurerm_user_assigned_identity.bridge.client_id
}

output "bridge_queue_service_url" {
  description = "BRIDGE_QUEUE_SERVICE_URL for the bridge ConfigMap."
  value       = azurerm_storage_account.app.primary_queue_endpoint
}

output "bridge_queue_name" {
  description = "BRIDGE_QUEUE_NAME for the bridge ConfigMap."
  value       = azurerm_storage_queue.events.name
}

output "app_insights_name" {
  description = "Application Insights component that holds the metric records."
  value       = azurerm_application_insights.app.name
}
